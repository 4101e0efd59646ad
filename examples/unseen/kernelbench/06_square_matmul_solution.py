"""Slow, correct candidate for KernelBench level 1 / 1_Square_matrix_multiplication_ (problem: 06_square_matmul_problem.py).

Written here in the style of model-generated KernelBench level-1 `load_inline` solutions (the structure
of KernelBench's own example, src/kernelbench/prompts/few_shot/model_new_ex_add.py,
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/prompts/few_shot/model_new_ex_add.py,
MIT): correct, naive, launched on the default stream. Not copied from a leaderboard entry.

Naive part: one thread per element of C with no data reuse (every multiply-add reloads A and B from
L1/L2), 16 x 16 blocks. The map is the coalesced one (column from threadIdx.x), as most generated
solutions write it, so the miss is the missing shared-memory tiling, not coalescing. Expected fix:
32 x 32 shared-memory tiles, then register tiling (siboehm/SGEMM_CUDA kernels 3-5).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void matmul_kernel(const float* A, const float* B, float* C, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N && col < N) {
        float value = 0.0f;
        for (int k = 0; k < N; ++k) {
            value += A[row * N + k] * B[k * N + col];
        }
        C[row * N + col] = value;
    }
}

torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B) {
    int N = A.size(0);
    auto C = torch::zeros({N, N}, A.options());

    dim3 threadsPerBlock(16, 16);
    dim3 numBlocks((N + threadsPerBlock.x - 1) / threadsPerBlock.x,
                   (N + threadsPerBlock.y - 1) / threadsPerBlock.y);

    matmul_kernel<<<numBlocks, threadsPerBlock>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);

    return C;
}
"""

matmul_cpp_source = "torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B);"

matmul = load_inline(
    name="unseen_kb_square_matmul",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_source,
    functions=["matmul_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.matmul = matmul

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.matmul.matmul_cuda(A.contiguous(), B.contiguous())
