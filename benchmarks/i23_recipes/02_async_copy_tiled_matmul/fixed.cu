// The tiled multiply with two shared stages: tile p + 1 is copied with cp.async while tile p is used.
#define TILE 16
__device__ __forceinline__ void copy_async4(float *smem, const float *gmem)
{
    unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void load_tiles(float (*As)[TILE], float (*Bs)[TILE], const float *A, const float *B,
                                           int N, int row, int col, int tx, int ty, int ph)
{
    if (row < N && ph * TILE + tx < N) copy_async4(&As[ty][tx], &A[row * N + ph * TILE + tx]);
    else As[ty][tx] = 0.0f;
    if (ph * TILE + ty < N && col < N) copy_async4(&Bs[ty][tx], &B[(ph * TILE + ty) * N + col]);
    else Bs[ty][tx] = 0.0f;
}
extern "C" __global__ void matmul_double_buffered(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[2][TILE][TILE];
    __shared__ float Bs[2][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    int phases = (N + TILE - 1) / TILE;
    float acc = 0.0f;
    if (phases > 0) load_tiles(As[0], Bs[0], A, B, N, row, col, tx, ty, 0);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    for (int ph = 0; ph < phases; ++ph) {
        int s = ph & 1;
        if (ph + 1 < phases) load_tiles(As[s ^ 1], Bs[s ^ 1], A, B, N, row, col, tx, ty, ph + 1);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[s][ty][k] * Bs[s][k][tx];
        __syncthreads();
    }
    if (row < N && col < N)
        C[row * N + col] = acc;
}
