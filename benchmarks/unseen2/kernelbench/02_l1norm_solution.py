"""Slow, correct candidate for KernelBench level 1 / 38_L1Norm_ (problem: 02_l1norm_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/9f4f619ba223c3a4b3bf66c44dbf2711.py (llama-3.1-70b, 0.0154x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/9f4f619ba223c3a4b3bf66c44dbf2711.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: one thread per row, so 16 rows make ONE block of 256 threads (16 live lanes) for the
whole GPU; each walks its 16384-float row twice, lanes 64 KiB apart. Expected fix: a block per row
with a shuffle/shared-memory sum of |x|, coalesced passes.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l1norm_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void l1norm_rows_kernel(const float* in, float* out, int n_rows, int n_cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n_rows) {
        float acc = 0.0f;
        for (int c = 0; c < n_cols; c++) {
            acc += fabs(in[r * n_cols + c]);
        }
        for (int c = 0; c < n_cols; c++) {
            out[r * n_cols + c] = in[r * n_cols + c] / acc;
        }
    }
}

torch::Tensor l1norm_forward(torch::Tensor in) {
    auto n_rows = in.size(0);
    auto n_cols = in.size(1);
    auto out = torch::zeros_like(in);
    const int threads = 256;
    const int blocks = (n_rows + threads - 1) / threads;
    l1norm_rows_kernel<<<blocks, threads>>>(in.data_ptr<float>(), out.data_ptr<float>(), n_rows, n_cols);
    return out;
}
"""

l1norm_decl = "torch::Tensor l1norm_forward(torch::Tensor in);"

l1norm_ext = load_inline(
    name="unseen2_kb_l1norm",
    cpp_sources=l1norm_decl,
    cuda_sources=l1norm_src,
    functions=["l1norm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = l1norm_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.l1norm_forward(x)
