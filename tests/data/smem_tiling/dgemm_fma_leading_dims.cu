// Naive DGEMM with BLAS-style leading dimensions (netlib reference BLAS dgemm.f: LDA, LDB, LDC separate
// from M, N, K), as OpenCL/CUDA ports of it write the per-element kernel: `long long` indices, the
// column from threadIdx.x, the product accumulated with fma(), C = alpha * A*B + beta * C.
extern "C" __global__ void dgemm_naive(long long m, long long n, long long k, double alpha,
                                       const double* A, long long lda, const double* B, long long ldb,
                                       double beta, double* C, long long ldc)
{
    const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long i = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (i < m && j < n) {
        double acc = 0.0;
        for (long long l = 0; l < k; ++l)
            acc = fma(A[i * lda + l], B[l * ldb + j], acc);
        C[i * ldc + j] = alpha * acc + beta * C[i * ldc + j];
    }
}
