// unseen2/21_bmm_strided_half: strided batched half-precision GEMM
// C[b] = alpha * A[b] * B[b] (row-major, fp32 accumulation) with the argument list of cuBLAS
// `cublasGemmStridedBatchedEx` (long long batch strides).
// Shared-memory tiled version: a 16x16-thread block computes a 64x64 tile of C. Per K step it stages a
// 64x32 tile of A (stored k-major) and a 32x64 tile of B in shared memory as fp32, loaded with coalesced
// 16-byte vectors (8 halves) when the shapes and pointers allow and guarded scalar loads otherwise
// (zero fill at the edges); each thread then accumulates a 4x4 sub-tile from shared memory with
// float4 reads. fp32 accumulation in ascending k order, as before.
// Launch: block (16, 16), grid (ceil(N/64), ceil(M/64), batch).
#include <cuda_fp16.h>
#include <stdint.h>

#define TBM 64
#define TBN 64
#define TBK 32
#define SPAD 4

extern "C" __global__ void __launch_bounds__(256) hgemm_strided_batched_ref(int M, int N, int K, float alpha,
                                                     const __half *A, long long strideA,
                                                     const __half *B, long long strideB,
                                                     __half *C, long long strideC)
{
    __shared__ __align__(16) float As[TBK][TBM + SPAD]; // As[k][m]
    __shared__ __align__(16) float Bs[TBK][TBN + SPAD]; // Bs[k][n]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = ty * 16 + tx; // 0..255
    const int m0 = blockIdx.y * TBM, n0 = blockIdx.x * TBN;
    const int batch = blockIdx.z;
    const __half *a = A + batch * strideA;
    const __half *b = B + batch * strideB;

    const bool vecA = ((K & 7) == 0) && ((strideA & 7) == 0) && ((((uintptr_t)A) & 15) == 0);
    const bool vecB = ((N & 7) == 0) && ((strideB & 7) == 0) && ((((uintptr_t)B) & 15) == 0);

    // load mapping: A tile 64 rows x 32 k -> row t/4, k (t%4)*8 ; B tile 32 k x 64 cols -> k t/8, col (t%8)*8
    const int a_r = t >> 2, a_k = (t & 3) * 8;
    const int b_k = t >> 3, b_c = (t & 7) * 8;

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TBK) {
        // ---- stage A (64 x 32) ----
        {
            const int gr = m0 + a_r, gk = k0 + a_k;
            float v[8];
            if (vecA) {
                if (gr < M && gk < K) {
                    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(a + (long long)gr * K + gk));
                    const __half2 *h2 = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const float2 f = __half22float2(h2[q]);
                        v[2 * q] = f.x;
                        v[2 * q + 1] = f.y;
                    }
                } else {
#pragma unroll
                    for (int q = 0; q < 8; ++q) v[q] = 0.0f;
                }
            } else {
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    v[q] = (gr < M && gk + q < K) ? __half2float(a[(long long)gr * K + gk + q]) : 0.0f;
            }
#pragma unroll
            for (int q = 0; q < 8; ++q) As[a_k + q][a_r] = v[q];
        }
        // ---- stage B (32 x 64) ----
        {
            const int gk = k0 + b_k, gc = n0 + b_c;
            float v[8];
            if (vecB) {
                if (gk < K && gc < N) {
                    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(b + (long long)gk * N + gc));
                    const __half2 *h2 = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const float2 f = __half22float2(h2[q]);
                        v[2 * q] = f.x;
                        v[2 * q + 1] = f.y;
                    }
                } else {
#pragma unroll
                    for (int q = 0; q < 8; ++q) v[q] = 0.0f;
                }
            } else {
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    v[q] = (gk < K && gc + q < N) ? __half2float(b[(long long)gk * N + gc + q]) : 0.0f;
            }
            *reinterpret_cast<float4 *>(&Bs[b_k][b_c]) = make_float4(v[0], v[1], v[2], v[3]);
            *reinterpret_cast<float4 *>(&Bs[b_k][b_c + 4]) = make_float4(v[4], v[5], v[6], v[7]);
        }
        __syncthreads();

        const int kmax = min(TBK, K - k0);
        for (int kk = 0; kk < kmax; ++kk) {
            const float4 av = *reinterpret_cast<const float4 *>(&As[kk][ty * 4]);
            const float4 bv = *reinterpret_cast<const float4 *>(&Bs[kk][tx * 4]);
            const float ar[4] = {av.x, av.y, av.z, av.w};
            const float br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += ar[i] * br[j];
        }
        __syncthreads();
    }

    __half *c = C + batch * strideC;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row = m0 + ty * 4 + i;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = n0 + tx * 4 + j;
            if (col < N) c[(long long)row * N + col] = __float2half(alpha * acc[i][j]);
        }
    }
}
