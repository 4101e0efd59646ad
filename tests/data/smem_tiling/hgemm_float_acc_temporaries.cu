// Naive mixed-precision GEMM D = alpha * A*B + beta * C: __half operands, a float accumulator fed through
// temporaries, `unsigned int` indices and an early return, as the "kernel_0" (naive: no shared memory, no
// Tensor Cores) of a public Tensor-Core GEMM tutorial ladder writes it (found by code search; the
// repository was not identified). That kernel keeps `half a_val = A[...]` and converts in the product;
// here the temporaries convert (`const float a = __half2float(A[...])`).
#include <cuda_fp16.h>

__global__ void kernel_0(const half* A, const half* B, const half* C, half* D, const float alpha,
                         const float beta, const unsigned int M, const unsigned int N, unsigned int K)
{
    const unsigned int m = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M || n >= N) return;

    float acc = 0.0f;
    for (unsigned int k = 0; k < K; k++) {
        const float a = __half2float(A[m * K + k]);
        const float b = __half2float(B[k * N + n]);
        acc += a * b;
    }
    D[m * N + n] = __float2half(alpha * acc + beta * __half2float(C[m * N + n]));
}
