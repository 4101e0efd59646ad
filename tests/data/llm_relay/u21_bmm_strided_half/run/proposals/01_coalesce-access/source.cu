// unseen2/21_bmm_strided_half: strided batched half-precision GEMM
// C[b] = alpha * A[b] * B[b] (row-major, fp32 accumulation) with the argument list of cuBLAS
// `cublasGemmStridedBatchedEx` (long long batch strides).
// Coalesced version: the 16x16 block stages a 16x32 tile of A and a 32x16 tile of B in shared memory
// per K step; consecutive threads load consecutive halves of a row of A (64 bytes per warp) and of a
// row of B, then every thread reads its row of A / column of B from shared memory. One output element
// per thread, fp32 accumulation in the same k order as before.
// Launch: block (16, 16), grid (ceil(N/16), ceil(M/16), batch).
#include <cuda_fp16.h>

#define TS 16
#define BK 32

extern "C" __global__ void __launch_bounds__(256) hgemm_strided_batched_ref(int M, int N, int K, float alpha,
                                                     const __half *A, long long strideA,
                                                     const __half *B, long long strideB,
                                                     __half *C, long long strideC)
{
    __shared__ float As[TS][BK + 1];
    __shared__ float Bs[BK][TS + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = ty * TS + tx; // 0..255
    const int row0 = blockIdx.y * TS, col0 = blockIdx.x * TS;
    const int row = row0 + ty, col = col0 + tx;
    const int batch = blockIdx.z;
    const __half *a = A + batch * strideA;
    const __half *b = B + batch * strideB;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile: TS rows x BK k, 2 elements per thread, lanes run along k (contiguous)
#pragma unroll
        for (int e = t; e < TS * BK; e += TS * TS) {
            const int r = e / BK, kk = e % BK;
            const int gr = row0 + r, gk = k0 + kk;
            As[r][kk] = (gr < M && gk < K) ? __half2float(a[(long long)gr * K + gk]) : 0.0f;
        }
        // B tile: BK k x TS cols, 2 elements per thread, lanes run along n (contiguous)
#pragma unroll
        for (int e = t; e < BK * TS; e += TS * TS) {
            const int kk = e / TS, c = e % TS;
            const int gk = k0 + kk, gc = col0 + c;
            Bs[kk][c] = (gk < K && gc < N) ? __half2float(b[(long long)gk * N + gc]) : 0.0f;
        }
        __syncthreads();
        const int kmax = min(BK, K - k0);
        for (int kk = 0; kk < kmax; ++kk)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[batch * strideC + (long long)row * N + col] = __float2half(alpha * acc);
}
