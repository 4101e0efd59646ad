// unseen2/04_colsum_double_thread_per_column: column sums of a tall, narrow row-major fp64 matrix
// (torch.sum(x, dim=0) on a (rows x cols) tensor with few columns).
// Parallel version (split-K over rows): grid (ceil(cols / 32), nsplit), block (32, 8).
// Each block takes 32 adjacent columns (one coalesced 256-byte segment per warp row) and one contiguous
// slice of rows; its 8 warps walk the slice 8 rows apart with 4 independent accumulators, combine in
// shared memory and write one partial per column into a device scratch buffer. The last block of each
// column tile (ticket counter, threadfence-reduction pattern) adds the partials in a fixed order and
// writes sums[col], then resets its ticket, so the result is deterministic and nothing depends on the
// previous contents of `sums`. If the scratch is too small for the grid, block row 0 does all rows.
#define CS_MAX_PARTIALS (1 << 20)
#define CS_MAX_TILES 65536

__device__ double g_colsum_partials[CS_MAX_PARTIALS];
__device__ unsigned int g_colsum_tickets[CS_MAX_TILES];

extern "C" __global__ void __launch_bounds__(256) column_sums(const double *__restrict__ mat, double *__restrict__ sums,
                                                              int rows, int cols)
{
    __shared__ double red[8][33];
    __shared__ int am_last;
    const int tx = threadIdx.x; // 0..31 : column within the tile
    const int ty = threadIdx.y; // 0..7  : row phase
    const int col = blockIdx.x * 32 + tx;
    const int nsplit = gridDim.y;
    const bool split_ok = ((long long)nsplit * cols <= CS_MAX_PARTIALS) && (gridDim.x <= CS_MAX_TILES);

    int r0, r1;
    if (split_ok) {
        const int chunk = (rows + nsplit - 1) / nsplit;
        r0 = min(rows, (int)blockIdx.y * chunk);
        r1 = min(rows, r0 + chunk);
    } else {
        if (blockIdx.y != 0) return; // block-uniform
        r0 = 0;
        r1 = rows;
    }

    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    if (col < cols) {
        int r = r0 + ty;
        for (; r + 24 < r1; r += 32) {
            a0 += __ldg(mat + (size_t)r * cols + col);
            a1 += __ldg(mat + (size_t)(r + 8) * cols + col);
            a2 += __ldg(mat + (size_t)(r + 16) * cols + col);
            a3 += __ldg(mat + (size_t)(r + 24) * cols + col);
        }
        for (; r < r1; r += 8)
            a0 += __ldg(mat + (size_t)r * cols + col);
    }
    red[ty][tx] = (a0 + a1) + (a2 + a3);
    __syncthreads();

    if (!split_ok) {
        if (ty == 0 && col < cols) {
            double s = red[0][tx];
#pragma unroll
            for (int k = 1; k < 8; ++k)
                s += red[k][tx];
            sums[col] = s;
        }
        return;
    }

    if (ty == 0 && col < cols) {
        double s = red[0][tx];
#pragma unroll
        for (int k = 1; k < 8; ++k)
            s += red[k][tx];
        g_colsum_partials[(size_t)blockIdx.y * cols + col] = s;
    }
    __threadfence();
    __syncthreads();
    if (tx == 0 && ty == 0) {
        const unsigned int ticket = atomicAdd(&g_colsum_tickets[blockIdx.x], 1u);
        am_last = (ticket == (unsigned int)(nsplit - 1));
    }
    __syncthreads();
    if (!am_last) return; // block-uniform
    __threadfence();

    double s = 0.0;
    if (col < cols)
        for (int y = ty; y < nsplit; y += 8)
            s += __ldcg(&g_colsum_partials[(size_t)y * cols + col]);
    red[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && col < cols) {
        double t = red[0][tx];
#pragma unroll
        for (int k = 1; k < 8; ++k)
            t += red[k][tx];
        sums[col] = t;
    }
    if (tx == 0 && ty == 0)
        g_colsum_tickets[blockIdx.x] = 0u; // ready for the next launch
}
