// unseen2/22_conv2d_basic_global_filter / fixed: tiled 2-D convolution with caching of the input
// tile in shared memory, halo cells read through the cache (PMPP 4th ed., ch. 7, Fig. 7.15
// `convolution_cached_tiled_2D_const_mem_kernel`). The book keeps the filter in __constant__
// memory; a launch spec passes it as an argument, so the block stages it in shared memory instead
// (the same broadcast reuse). Taps are summed in the same (fRow, fCol) order as the basic kernel.
// Launch: block (TILE_DIM, TILE_DIM), grid (ceil(width/TILE_DIM), ceil(height/TILE_DIM));
// FILTER_RADIUS = r (spec define).
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef FILTER_RADIUS
#define FILTER_RADIUS 4
#endif
#define FILTER_DIM (2 * FILTER_RADIUS + 1)

extern "C" __global__ void convolution_cached_tiled_2D_kernel(float *N, float *F, float *P, int r, int width,
                                                              int height)
{
    __shared__ float N_s[TILE_DIM][TILE_DIM];
    __shared__ float F_s[FILTER_DIM * FILTER_DIM];
    const int tid = threadIdx.y * TILE_DIM + threadIdx.x;
    for (int i = tid; i < FILTER_DIM * FILTER_DIM; i += TILE_DIM * TILE_DIM)
        F_s[i] = F[i];
    int col = blockIdx.x * TILE_DIM + threadIdx.x;
    int row = blockIdx.y * TILE_DIM + threadIdx.y;
    if (row < height && col < width)
        N_s[threadIdx.y][threadIdx.x] = N[row * width + col];
    else
        N_s[threadIdx.y][threadIdx.x] = 0.0f;
    __syncthreads();
    if (col < width && row < height) {
        float Pvalue = 0.0f;
#pragma unroll
        for (int fRow = 0; fRow < FILTER_DIM; fRow++) {
#pragma unroll
            for (int fCol = 0; fCol < FILTER_DIM; fCol++) {
                int tx = (int)threadIdx.x - FILTER_RADIUS + fCol;
                int ty = (int)threadIdx.y - FILTER_RADIUS + fRow;
                int inRow = row - FILTER_RADIUS + fRow;
                int inCol = col - FILTER_RADIUS + fCol;
                // Inside the tile AND inside the image: from shared memory. A tile cell past the
                // image edge holds 0 but the basic kernel skips it, so test the image bounds too.
                if (tx >= 0 && tx < TILE_DIM && ty >= 0 && ty < TILE_DIM && inRow < height && inCol < width)
                    Pvalue += F_s[fRow * FILTER_DIM + fCol] * N_s[ty][tx];
                else if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width)
                    Pvalue += F_s[fRow * FILTER_DIM + fCol] * N[inRow * width + inCol];
            }
        }
        P[row * width + col] = Pvalue;
    }
}
