// siboehm/SGEMM_CUDA kernel 3 shape (shared-memory cache blocking), written with 2-D tiles.
// C = alpha * A @ B + beta * C, row-major. Block (TILE, TILE), grid (ceil(N/TILE), ceil(M/TILE)).
// Test data for the recipes: 2-D __shared__ tiles whose last dimension is 32 (smem-padding), an
// innermost constant-trip loop without #pragma unroll (loop-unroll), pointer params without
// __restrict__ (restrict-pointers).
#define TILE 32

__global__ void sgemm_smem_tiled(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float tmp = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            tmp += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = alpha * tmp + beta * C[row * N + col];
}
