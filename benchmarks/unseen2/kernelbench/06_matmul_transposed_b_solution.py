"""Slow, correct candidate for KernelBench level 1 / 17_Matmul_with_transposed_B (problem: 06_matmul_transposed_b_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/700714668235d5d4c0c4797f8c6e5091.py (claude-3.5-sonnet, 0.0408x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/700714668235d5d4c0c4797f8c6e5091.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: C = A B^T with B stored N x K; column of C from threadIdx.x, so the B reads
B[col * K + k] of a warp are 16 KiB apart (uncoalesced), A is a broadcast; no tiling.
Expected fix: stage A and B tiles in shared memory (B tile loaded along K, coalesced), register tiling.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mmtb_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void matmul_bt_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += A[row * K + k] * B[col * K + k];
        }
        C[row * N + col] = acc;
    }
}

torch::Tensor matmul_bt_forward(torch::Tensor A, torch::Tensor B) {
    const int M = A.size(0);
    const int K = A.size(1);
    const int N = B.size(0);
    auto C = torch::zeros({M, N}, A.options());
    dim3 block(16, 16);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    matmul_bt_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    return C;
}
"""

mmtb_decl = "torch::Tensor matmul_bt_forward(torch::Tensor A, torch::Tensor B);"

mmtb_ext = load_inline(
    name="unseen2_kb_matmul_transposed_b",
    cpp_sources=mmtb_decl,
    cuda_sources=mmtb_src,
    functions=["matmul_bt_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = mmtb_ext

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.ext.matmul_bt_forward(A, B)
