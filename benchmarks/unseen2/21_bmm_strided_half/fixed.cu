// unseen2/21_bmm_strided_half / fixed: the same strided batched GEMM with TS x TS shared-memory
// tiles of A and B per block (the PMPP ch. 5 / CUDA C++ Programming Guide "Shared Memory" matrix
// multiplication scheme, one tile pair per phase, zero-filled tails), batch from blockIdx.z.
// fp32 accumulation in the same k order as the reference.
// Launch: block (TS, TS), grid (ceil(N/TS), ceil(M/TS), batch).
#include <cuda_fp16.h>
#ifndef TS
#define TS 32
#endif

extern "C" __global__ void hgemm_strided_batched_tiled(int M, int N, int K, float alpha,
                                                       const __half *A, long long strideA,
                                                       const __half *B, long long strideB,
                                                       __half *C, long long strideC)
{
    __shared__ float As[TS][TS];
    __shared__ float Bs[TS][TS + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TS + tx;
    const int row = blockIdx.y * TS + ty;
    const __half *a = A + blockIdx.z * strideA;
    const __half *b = B + blockIdx.z * strideB;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        As[ty][tx] = (row < M && k0 + tx < K) ? __half2float(a[row * K + k0 + tx]) : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? __half2float(b[(k0 + ty) * N + col]) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TS; ++kk)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[blockIdx.z * strideC + row * N + col] = __float2half(alpha * acc);
}
