// 01_transpose_lds_conflicts / slow: LDS-tiled transpose WITHOUT padding.
// Global reads and writes are both coalesced, but the column-wise read tile[threadIdx.x][threadIdx.y + j]
// makes the lanes of a wavefront hit addresses 32 floats (128 bytes) apart. CDNA's LDS has 32 banks of
// 4 bytes (sysinfo lds_banks_per_cu = 32 on MI300X), so all 32 lanes served in one LDS cycle fall into the
// same bank: a 32-way bank conflict on every tile read (SQ_LDS_BANK_CONFLICT counts the stall cycles).
// Launch: block (TILE_DIM, BLOCK_ROWS) = (32, 8) = 4 wave64, grid (ceil(width/32), ceil(height/32)).
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

// idata is height x width (row-major); odata is width x height (row-major).
extern "C" __global__ void transpose_lds_conflicts(float *odata, const float *idata, int width, int height)
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
