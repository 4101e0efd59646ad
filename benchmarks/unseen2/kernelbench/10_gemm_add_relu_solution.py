"""Slow, correct candidate for KernelBench level 2 / 76_Gemm_Add_ReLU (problem: 10_gemm_add_relu_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/624f999ae38bf97da2628a03b42b8438.py (gemini-1.5-flash, 0.151x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/624f999ae38bf97da2628a03b42b8438.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: a fused linear + bias + ReLU with one thread per output on a flat index
(i / out_features, i % out_features): a warp's 32 outputs read 32 weight rows 4 KiB apart
(uncoalesced) and re-read x from L1; no tiling, no reuse. Expected fix: a tiled GEMM with the bias
and ReLU in the epilogue (weight tile loaded along in_features, coalesced).
The module keeps the problem's parameters (nn.Linear without bias, then a bias Parameter) in the
same order, so a seeded init gives both models the same weights.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_relu_src = """
#include <torch/extension.h>

__global__ void linear_bias_relu_kernel(const float* x, const float* w, const float* b, float* y,
                                        int batch, int in_f, int out_f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch * out_f) {
    int row = i / out_f;
    int o = i % out_f;
    float acc = 0.0f;
    for (int k = 0; k < in_f; ++k) {
      acc += x[row * in_f + k] * w[o * in_f + k];
    }
    acc += b[o];
    y[i] = fmaxf(0.0f, acc);
  }
}

torch::Tensor linear_bias_relu_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  int batch = x.size(0);
  int in_f = x.size(1);
  int out_f = w.size(0);
  torch::Tensor y = torch::zeros({batch, out_f}, x.options());
  const int threads = 256;
  const int blocks = (batch * out_f + threads - 1) / threads;
  linear_bias_relu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                                               y.data_ptr<float>(), batch, in_f, out_f);
  return y;
}
"""

linear_relu_decl = (
    "torch::Tensor linear_bias_relu_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b);"
)

linear_relu_ext = load_inline(
    name="unseen2_kb_gemm_add_relu",
    cpp_sources=linear_relu_decl,
    cuda_sources=linear_relu_src,
    functions=["linear_bias_relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.ext = linear_relu_ext

    def forward(self, x):
        return self.ext.linear_bias_relu_forward(x, self.gemm.weight, self.bias)
