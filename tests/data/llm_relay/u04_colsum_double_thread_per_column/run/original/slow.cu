// unseen2/04_colsum_double_thread_per_column / slow: column sums of a tall, narrow row-major fp64 matrix
// (torch.sum(x, dim=0) on a (rows x cols) tensor with few columns), one thread per column walking every
// row. Loads are coalesced across the warp, but only `cols` threads exist: a few warps on a few SMs,
// each a long serial chain. Launch: block 128, grid ceil(cols / 128).
extern "C" __global__ void column_sums(const double *__restrict__ mat, double *__restrict__ sums, int rows,
                                       int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    double acc = 0.0;
    for (int r = 0; r < rows; ++r)
        acc += mat[(size_t)r * cols + col];
    sums[col] = acc;
}
