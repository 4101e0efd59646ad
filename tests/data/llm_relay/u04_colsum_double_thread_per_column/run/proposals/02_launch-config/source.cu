// unseen2/04_colsum_double_thread_per_column: column sums of a tall, narrow row-major fp64 matrix
// (torch.sum(x, dim=0) on a (rows x cols) tensor with few columns).
// Re-configured launch: block (CB, RB) = (4, 256) = 1024 threads: each block owns only CB = 4 adjacent
// columns (one full 32-byte sector per matrix row) and spreads the rows over RB = 256 threads, so the
// grid has ceil(cols / 4) blocks of 32 warps instead of ceil(cols / 128) blocks of 4 warps. Each thread
// sums rows ty, ty + 256, ... with 4 independent accumulators; the 256 partials of a column are combined
// in the block (warp shuffles over the 8 rows a warp holds, then 32 warp partials in shared memory), in
// a fixed order, and written to sums[col] (overwritten as before).
// Launch: block (4, 256), grid ceil(cols / 4).
#define CB 4   // columns per block (blockDim.x)
#define RB 256 // row lanes per block (blockDim.y)

extern "C" __global__ void __launch_bounds__(CB * RB) column_sums(const double *__restrict__ mat, double *__restrict__ sums,
                                                                  int rows, int cols)
{
    __shared__ double red[(CB * RB) / 32][CB];
    const int tx = threadIdx.x; // column within the block
    const int ty = threadIdx.y; // row lane
    const int col = blockIdx.x * CB + tx;

    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    if (col < cols) {
        int r = ty;
        for (; r + 3 * RB < rows; r += 4 * RB) {
            a0 += __ldg(mat + (size_t)r * cols + col);
            a1 += __ldg(mat + (size_t)(r + RB) * cols + col);
            a2 += __ldg(mat + (size_t)(r + 2 * RB) * cols + col);
            a3 += __ldg(mat + (size_t)(r + 3 * RB) * cols + col);
        }
        for (; r < rows; r += RB)
            a0 += __ldg(mat + (size_t)r * cols + col);
    }
    double v = (a0 + a1) + (a2 + a3);

    // a warp holds 8 row lanes x 4 columns (lane = row_in_warp * 4 + tx): reduce over the 8 rows
    const int tid = ty * CB + tx;
    const int lane = tid & 31, warp = tid >> 5;
#pragma unroll
    for (int o = CB; o < 32; o <<= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane < CB) red[warp][lane] = v;
    __syncthreads();
    if (ty == 0 && col < cols) {
        double s = 0.0;
#pragma unroll 8
        for (int w = 0; w < (CB * RB) / 32; ++w)
            s += red[w][tx];
        sums[col] = s;
    }
}
