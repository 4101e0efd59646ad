// unseen2/21_bmm_strided_half / slow: strided batched half-precision GEMM
// C[b] = alpha * A[b] * B[b] (row-major, fp32 accumulation) with the argument list of cuBLAS
// `cublasGemmStridedBatchedEx` (long long batch strides; NVIDIA blog "Pro Tip: cuBLAS Strided
// Batched Matrix Multiply", C. Cecka, 2017), written as the naive one-thread-per-element reference
// such code is checked against: batch index from blockIdx.z, 2-byte loads, no reuse of A or B
// across threads (L1/L2-bound, far from the FP16 peak).
// Launch: block (16, 16), grid (ceil(N/16), ceil(M/16), batch).
#include <cuda_fp16.h>

extern "C" __global__ void hgemm_strided_batched_ref(int M, int N, int K, float alpha,
                                                     const __half *A, long long strideA,
                                                     const __half *B, long long strideB,
                                                     __half *C, long long strideC)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int batch = blockIdx.z;
    if (row >= M || col >= N)
        return;
    const __half *a = A + batch * strideA;
    const __half *b = B + batch * strideB;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += __half2float(a[row * K + k]) * __half2float(b[k * N + col]);
    C[batch * strideC + row * N + col] = __float2half(alpha * acc);
}
