// Naive HGEMM in the style of Bruce-Lee-LY/cuda_hgemm src/simt/simt_naive.cu (simtNaiveKernel): __half
// operands and a __half accumulator, size_t indices, `#pragma unroll` on the k loop, an early return
// for out-of-range threads. Written here with a row-major B (the original reads B K-major,
// B[i + col * K]; that layout is tests/data/smem_tiling/hgemm_b_k_major.cu) and `||` in the guard.
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
#pragma unroll
    for (size_t i = 0; i < K; ++i) {
        tmp += A[row * K + i] * B[i * N + col];
    }

    C[row * N + col] = tmp;
}
