// 02_transpose_bank_conflicts / fixed: the same kernel with one extra column of padding,
// tile[TILE_DIM][TILE_DIM + 1] (cuda-samples `transposeNoBankConflicts`): element (r, c) lives in
// bank (r * 33 + c) % 32 = (r + c) % 32, so a column read touches 32 distinct banks.
// Launch: identical to transpose_smem_conflicts.
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

extern "C" __global__ void transpose_smem_padded(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = idata[(size_t)(y + j) * width + x];
    }
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < height && y + j < width)
            odata[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
