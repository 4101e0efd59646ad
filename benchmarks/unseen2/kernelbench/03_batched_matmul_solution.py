"""Slow, correct candidate for KernelBench level 1 / 3_Batched_matrix_multiplication (problem: 03_batched_matmul_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/cff31c6f5150f2af1da4e30106868c2b.py (deepseek-coder, 0.120x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/cff31c6f5150f2af1da4e30106868c2b.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: a flat grid-stride loop over batch*m*n outputs with div/mod index decoding, one thread
per C element, no tiling: every thread streams a row of A and a column of B (L1/L2-bound, no reuse).
Expected fix: shared-memory (and register) tiled batched GEMM, batch from blockIdx.z.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bmm_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bmm_flat_kernel(const float* A, const float* B, float* C, int batch, int m, int k, int n) {
    int start = blockIdx.x * blockDim.x + threadIdx.x;
    int step = blockDim.x * gridDim.x;
    for (int t = start; t < batch * m * n; t += step) {
        int b = t / (m * n);
        int i = (t % (m * n)) / n;
        int j = (t % (m * n)) % n;
        float acc = 0.0f;
        for (int p = 0; p < k; ++p) {
            acc += A[b * m * k + i * k + p] * B[b * k * n + p * n + j];
        }
        C[b * m * n + i * n + j] = acc;
    }
}

torch::Tensor bmm_forward(torch::Tensor A, torch::Tensor B) {
    auto batch = A.size(0);
    auto m = A.size(1);
    auto k = A.size(2);
    auto n = B.size(2);
    auto C = torch::zeros({batch, m, n}, A.options());
    const int threads = 256;
    const int blocks = (batch * m * n + threads - 1) / threads;
    bmm_flat_kernel<<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), batch, m, k, n);
    return C;
}
"""

bmm_decl = "torch::Tensor bmm_forward(torch::Tensor A, torch::Tensor B);"

bmm_ext = load_inline(
    name="unseen2_kb_batched_matmul",
    cpp_sources=bmm_decl,
    cuda_sources=bmm_src,
    functions=["bmm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ext = bmm_ext

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.ext.bmm_forward(A, B)
