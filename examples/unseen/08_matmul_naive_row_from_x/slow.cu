// Naive SGEMM, C = alpha*A*B + beta*C, as kernel 1 of Simon Boehm's "How to Optimize a CUDA Matmul Kernel
// for cuBLAS-like Performance" (siboehm/SGEMM_CUDA, src/kernels/1_naive.cuh): the ROW of C comes from the
// x thread index, so a warp's 32 threads read 32 different rows of A (stride K) and write C with stride N.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                                       float beta, float* C)
{
    const unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i) tmp += A[x * K + i] * B[i * N + y];
        C[x * N + y] = alpha * tmp + beta * C[x * N + y];
    }
}
