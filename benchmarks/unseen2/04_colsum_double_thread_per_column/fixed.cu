// unseen2/04_colsum_double_thread_per_column / fixed: the rows are split over threadIdx.y and over
// gridDim.y blocks (the 2-D "column reduction" layout of PyTorch's Reduce.cuh and CUB's
// BlockReduce-by-column idiom): each thread sums a strided slice of its column, the blockDim.y partials
// meet in shared memory, and one atomicAdd(double) per column per block finishes.
// Launch: block (32, 8), grid (ceil(cols / 32), ROW_SPLIT); sums must start at zero.
#define TILE_X 32
#define TILE_Y 8

extern "C" __global__ void column_sums_split(const double *__restrict__ mat, double *__restrict__ sums,
                                             int rows, int cols)
{
    __shared__ double part[TILE_Y][TILE_X];
    const int col = blockIdx.x * TILE_X + threadIdx.x;
    double acc = 0.0;
    if (col < cols) {
        for (int r = blockIdx.y * TILE_Y + threadIdx.y; r < rows; r += TILE_Y * gridDim.y)
            acc += mat[(size_t)r * cols + col];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        double total = 0.0;
#pragma unroll
        for (int k = 0; k < TILE_Y; ++k) total += part[k][threadIdx.x];
        atomicAdd(&sums[col], total);
    }
}
