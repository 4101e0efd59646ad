// 10_sgemm_naive / fixed: siboehm kernel 3 (shared-memory cache blocking), i.e. the coalescing fix
// (kernel 2: consecutive threads take consecutive COLUMNS of C) plus 32 x 32 tiles of A and B
// staged in shared memory, so each global element is loaded once per tile instead of once per
// multiply-add. Bounds-checked, so any M, N, K works.
// Launch: block (SGEMM_TILE * SGEMM_TILE) = 1024 threads (1-D), grid (ceil(M/32), ceil(N/32)).
#ifndef SGEMM_TILE
#define SGEMM_TILE 32
#endif

extern "C" __global__ void sgemm_smem_tiled(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    __shared__ float As[SGEMM_TILE * SGEMM_TILE];
    __shared__ float Bs[SGEMM_TILE * SGEMM_TILE];

    const int threadCol = threadIdx.x % SGEMM_TILE;
    const int threadRow = threadIdx.x / SGEMM_TILE;
    const int row = blockIdx.x * SGEMM_TILE + threadRow;  // row of C
    const int col = blockIdx.y * SGEMM_TILE + threadCol;  // column of C: consecutive across a warp

    float tmp = 0.0f;
    for (int bk = 0; bk < K; bk += SGEMM_TILE) {
        As[threadRow * SGEMM_TILE + threadCol] =
            (row < M && bk + threadCol < K) ? A[(size_t)row * K + bk + threadCol] : 0.0f;
        Bs[threadRow * SGEMM_TILE + threadCol] =
            (bk + threadRow < K && col < N) ? B[(size_t)(bk + threadRow) * N + col] : 0.0f;
        __syncthreads();
        for (int d = 0; d < SGEMM_TILE; ++d)
            tmp += As[threadRow * SGEMM_TILE + d] * Bs[d * SGEMM_TILE + threadCol];
        __syncthreads();
    }
    if (row < M && col < N)
        C[(size_t)row * N + col] = alpha * tmp + beta * C[(size_t)row * N + col];
}
