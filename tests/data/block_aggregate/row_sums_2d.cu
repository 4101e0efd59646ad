// per-row sums on a 2-D grid: every block adds into its row's word (the address depends on blockIdx.y)
extern "C" __global__ void row_sums(const float *m, float *sums, int rows, int cols)
{
    const int row = blockIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols)
        atomicAdd(&sums[row], m[row * cols + col]);
}
