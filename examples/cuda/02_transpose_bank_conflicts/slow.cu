// 02_transpose_bank_conflicts / slow: shared-memory tiled transpose WITHOUT padding
// (cuda-samples `transposeCoalesced`). Global reads and writes are both coalesced, but the
// column-wise read tile[threadIdx.x][threadIdx.y + j] makes the 32 lanes of a warp hit addresses
// 32 floats apart: all in the same bank, a 32-way conflict on every shared load.
// TILE_DIM / BLOCK_ROWS are macros so that a recipe can sweep them (or pad the tile).
// Launch: block (TILE_DIM, BLOCK_ROWS), grid (ceil(width/TILE_DIM), ceil(height/TILE_DIM)).
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

// idata is height x width (row-major); odata is width x height (row-major).
extern "C" __global__ void transpose_smem_conflicts(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

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
