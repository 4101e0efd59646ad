"""Slow, correct candidate for KernelBench level 1 / 24_LogSoftmax (problem: 01_logsoftmax_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/a2c9bfd090804565a7c6a0f95ce4242e.py (deepseek-coder, 0.0046x of torch on the
leaderboard's GPU), https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/a2c9bfd090804565a7c6a0f95ce4242e.py
That repository carries no licence, so the file is re-written here (names, layout, comments), keeping
the solution's kernel form and launch geometry.

Naive part: one thread per OUTPUT ELEMENT, and every thread recomputes its row's max and sum of exp
over all 16384 columns: O(dim^2) loads per row (2 * 16384 * 16384 * 16 reads). Expected fix: a block
per row computing max / sum once (shuffle reductions), then a coalesced write pass.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

logsoftmax_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

__global__ void logsoftmax_elem_kernel(const float* x, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int r = i / cols;
        float mx = -INFINITY;
        for (int j = 0; j < cols; ++j) {
            float v = x[r * cols + j];
            if (v > mx) {
                mx = v;
            }
        }
        float se = 0.0f;
        for (int j = 0; j < cols; ++j) {
            se += expf(x[r * cols + j] - mx);
        }
        y[i] = x[i] - mx - logf(se);
    }
}

torch::Tensor logsoftmax_forward(torch::Tensor x, int dim) {
    auto rows = x.size(0);
    auto cols = x.size(1);
    auto y = torch::zeros_like(x);
    const int threads = 256;
    const int blocks = (rows * cols + threads - 1) / threads;
    logsoftmax_elem_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

logsoftmax_decl = "torch::Tensor logsoftmax_forward(torch::Tensor x, int dim);"

logsoftmax_ext = load_inline(
    name="unseen2_kb_logsoftmax",
    cpp_sources=logsoftmax_decl,
    cuda_sources=logsoftmax_src,
    functions=["logsoftmax_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim
        self.ext = logsoftmax_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.logsoftmax_forward(x, self.dim)
