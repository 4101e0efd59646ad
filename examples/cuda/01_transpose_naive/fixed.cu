// 01_transpose_naive / fixed: stage a 32x32 tile in shared memory so that both the global read and
// the global write are row-contiguous (cuda-samples `transposeNoBankConflicts`). The +1 column of
// padding keeps the column-wise shared-memory read free of bank conflicts.
// Launch: same as transpose_naive: block (TILE_DIM, BLOCK_ROWS), grid (ceil(width/TILE_DIM), ceil(height/TILE_DIM)).
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

extern "C" __global__ void transpose_tiled_padded(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = idata[(size_t)(y + j) * width + x];
    }
    __syncthreads();

    // Swap the block indices: this block writes the transposed tile, again row-contiguous.
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < height && y + j < width)
            odata[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
