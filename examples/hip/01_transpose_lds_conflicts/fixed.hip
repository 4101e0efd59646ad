// 01_transpose_lds_conflicts / fixed: the same transpose with the tile padded to TILE_DIM + 1 columns.
// Row r of the tile now starts r floats later in the bank rotation, so the column read
// tile[threadIdx.x][threadIdx.y + j] touches 32 different banks (bank = (tx + ty + j) mod 32): conflict-free.
// The write tile[threadIdx.y + j][threadIdx.x] stays conflict-free. 4224 B of LDS instead of 4096 B.
// Same signature, output and launch as transpose_lds_conflicts.
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

extern "C" __global__ void transpose_lds_padded(float *odata, const float *idata, int width, int height)
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
