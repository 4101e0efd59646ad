// PMPP ch. 5 tiled matrix multiply with boundary checks: load a tile, sync, multiply, sync.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int ph = 0; ph < (N + TILE - 1) / TILE; ++ph) {
        if (row < N && ph * TILE + tx < N)
            As[ty][tx] = A[row * N + ph * TILE + tx];
        else
            As[ty][tx] = 0.0f;
        Bs[ty][tx] = (ph * TILE + ty < N && col < N) ? B[(ph * TILE + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < N && col < N)
        C[row * N + col] = acc;
}
