"""Slow, correct candidate for KernelBench level 1 / 90_cumprod (problem: 07_cumprod_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/e1dbbc9e1eb3b82ba3835fd9ccd3739b.py (llama-3.1-70b, 0.0326x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/e1dbbc9e1eb3b82ba3835fd9ccd3739b.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: a sequential scan, one thread per row: 128 rows make ONE block of 256 threads (128 live
lanes); each walks its 4000-float row serially (a multiply chain), lanes 16 KB apart.
Expected fix: a block (or warp) per row with a parallel multiplicative scan (warp shuffles, carry
between chunks), coalesced loads/stores.
"""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cumprod_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void cumprod_rows_kernel(const float* x, float* y, int n_rows, int n_cols, int dim) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n_rows) {
        float running = 1.0f;
        for (int c = 0; c < n_cols; c++) {
            int at = r * n_cols + c;
            running *= x[at];
            y[at] = running;
        }
    }
}

torch::Tensor cumprod_forward(torch::Tensor x, int dim) {
    auto n_rows = x.size(0);
    auto n_cols = x.size(1);
    auto y = torch::zeros_like(x);
    const int threads = 256;
    const int blocks = (n_rows + threads - 1) / threads;
    cumprod_rows_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n_rows, n_cols, dim);
    return y;
}
"""

cumprod_decl = "torch::Tensor cumprod_forward(torch::Tensor x, int dim);"

cumprod_ext = load_inline(
    name="unseen2_kb_cumprod",
    cpp_sources=cumprod_decl,
    cuda_sources=cumprod_src,
    functions=["cumprod_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.ext = cumprod_ext

    def forward(self, x):
        return self.ext.cumprod_forward(x, self.dim)
