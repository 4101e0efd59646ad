// Naive HGEMM reading B K-major (B[i + col * K]: B^T stored row-major, an "NT" GEMM), as
// Bruce-Lee-LY/cuda_hgemm src/simt/simt_naive.cu (simtNaiveKernel) does, with `||` in its early return
// (the original writes `&&`). smem-tiling loads B's tile along k (coalesced) into a padded tile.
#include <cuda_fp16.h>

__global__ void simtNaiveKernel(const half *__restrict__ A, const half *__restrict__ B, half *__restrict__ C,
                                size_t M, size_t N, size_t K)
{
    size_t row = threadIdx.y + blockDim.y * blockIdx.y;
    size_t col = threadIdx.x + blockDim.x * blockIdx.x;
    if (row >= M || col >= N) {
        return;
    }
    half tmp = 0.0;
    for (size_t i = 0; i < K; ++i) {
        tmp += A[row * K + i] * B[i + col * K];
    }
    C[row * N + col] = tmp;
}
