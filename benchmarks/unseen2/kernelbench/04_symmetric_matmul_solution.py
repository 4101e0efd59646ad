"""Slow, correct candidate for KernelBench level 1 / 13_Matmul_for_symmetric_matrices (problem: 04_symmetric_matmul_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/95115494d8432073de8c6589b358240a.py (llama-3.1-70b, 0.0402x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/95115494d8432073de8c6589b358240a.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: untiled 4096^3 matmul with the ROW of C taken from threadIdx.x (16 x 16 blocks): lanes
read A rows 16 KiB apart and write C with a 16 KiB stride (uncoalesced), and nothing is reused.
The symmetry of A and B is not used either. Expected fix: column from threadIdx.x, then
shared-memory / register tiling.
"""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

symm_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void symm_matmul_kernel(const float* A, const float* B, float* C, int N) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < N && c < N) {
        float acc = 0.0f;
        for (int t = 0; t < N; t++) {
            acc += A[r * N + t] * B[t * N + c];
        }
        C[r * N + c] = acc;
    }
}

torch::Tensor symm_matmul_forward(torch::Tensor A, torch::Tensor B) {
    auto N = A.size(0);
    auto C = torch::zeros_like(A);
    const int tile = 16;
    dim3 grid((N + tile - 1) / tile, (N + tile - 1) / tile);
    dim3 block(tile, tile);
    symm_matmul_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);
    return C;
}
"""

symm_decl = "torch::Tensor symm_matmul_forward(torch::Tensor A, torch::Tensor B);"

symm_ext = load_inline(
    name="unseen2_kb_symmetric_matmul",
    cpp_sources=symm_decl,
    cuda_sources=symm_src,
    functions=["symm_matmul_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = symm_ext

    def forward(self, A, B):
        return self.ext.symm_matmul_forward(A, B)
