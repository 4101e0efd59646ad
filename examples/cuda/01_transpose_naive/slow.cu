// 01_transpose_naive / slow: naive out-of-place transpose (NVIDIA cuda-samples `transposeNaive`).
// Reads are coalesced (threadIdx.x walks along a row of idata), but writes are strided by `height`
// floats: every warp store touches 32 different 32-byte sectors and uses 4 bytes of each.
// Launch: block (TILE_DIM, BLOCK_ROWS), grid (ceil(width/TILE_DIM), ceil(height/TILE_DIM)).
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

// idata is height x width (row-major); odata is width x height (row-major).
extern "C" __global__ void transpose_naive(float *odata, const float *idata, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && y + j < height)
            odata[(size_t)x * height + (y + j)] = idata[(size_t)(y + j) * width + x];
    }
}
