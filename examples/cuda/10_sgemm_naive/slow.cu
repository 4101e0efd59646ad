// 10_sgemm_naive / slow: siboehm/SGEMM_CUDA kernel 1 (naive). C = alpha * A @ B + beta * C,
// row-major, A: M x K, B: K x N, C: M x N. threadIdx.x is mapped to the ROW of C, so the 32 lanes
// of a warp read A at 32 different rows (K floats apart: one 32-byte sector per lane, 4 bytes
// used) and write C 32 rows apart; B is read as a warp-wide broadcast. Every operand is reloaded
// from L1/L2 for each multiply-add: arithmetic intensity per byte moved is tiny.
// Launch: block (32, 32), grid (ceil(M/32), ceil(N/32)).
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    const unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;  // row of C
    const unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;  // column of C
    if (x < (unsigned int)M && y < (unsigned int)N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i)
            tmp += A[(size_t)x * K + i] * B[(size_t)i * N + y];
        C[(size_t)x * N + y] = alpha * tmp + beta * C[(size_t)x * N + y];
    }
}
