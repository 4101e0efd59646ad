// Naive SGEMM (siboehm kernel 2 indexing: x walks columns), blocks in row-major launch order.
extern "C" __global__ void sgemm_rowmajor_order(int M, int N, int K, const float *A, const float *B, float *C)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
            s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}
