"""Slow, correct candidate for KernelBench level 1 / 10_3D_tensor_matrix_multiplication (problem: 05_tensor3d_matmul_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/73ed29720615018491f4989e081cb09e.py (llama-3.1-405b, 0.0207x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/73ed29720615018491f4989e081cb09e.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: out[n, m, l] = sum_k A[n, m, k] B[k, l] with 8 x 8 x 8 blocks where x = n, y = m and
z = l: a warp holds 8 values of n and 4 of m at one l, so A loads are 8 KiB / 8 MiB apart and the
stores scatter; no reuse. Expected fix: treat it as one (N*M) x K by K x L GEMM, column from
threadIdx.x, tiled.
"""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tmm_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void tensor3d_matmul_kernel(const float* A, const float* B, float* out, int N, int M, int K, int L) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    int l = blockIdx.z * blockDim.z + threadIdx.z;
    if (n < N && m < M && l < L) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += A[n * M * K + m * K + k] * B[k * L + l];
        }
        out[n * M * L + m * L + l] = acc;
    }
}

torch::Tensor tensor3d_matmul_forward(torch::Tensor A, torch::Tensor B) {
    int N = A.size(0);
    int M = A.size(1);
    int K = A.size(2);
    int L = B.size(1);
    auto out = torch::zeros({N, M, L}, torch::TensorOptions().device(A.device()));
    dim3 block(8, 8, 8);
    dim3 grid((N + 7) / 8, (M + 7) / 8, (L + 7) / 8);
    tensor3d_matmul_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), out.data_ptr<float>(), N, M, K, L);
    return out;
}
"""

tmm_decl = "torch::Tensor tensor3d_matmul_forward(torch::Tensor A, torch::Tensor B);"

tmm_ext = load_inline(
    name="unseen2_kb_tensor3d_matmul",
    cpp_sources=tmm_decl,
    cuda_sources=tmm_src,
    functions=["tensor3d_matmul_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ext = tmm_ext

    def forward(self, A, B):
        return self.ext.tensor3d_matmul_forward(A, B)
