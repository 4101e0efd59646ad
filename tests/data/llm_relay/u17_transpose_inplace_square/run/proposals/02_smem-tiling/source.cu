// unseen2/17_transpose_inplace_square: in-place transpose of a square fp32 matrix.
// Shared-memory tiled version: one block per pair of mirrored 32x32 tiles (tile (ti, tj) with tj >= ti
// and its mirror (tj, ti)), enumerated by a 1-D grid over the upper triangle of the tile grid, so no
// block is launched for the lower triangle. Both tiles are read row-wise (coalesced) into padded shared
// memory, __syncthreads(), then written back row-wise with the transposed data read column-wise from
// shared memory (stride 33: conflict-free). A diagonal tile is transposed within one buffer.
// Launch: block (32, 8), grid nt * (nt + 1) / 2 with nt = ceil(n / 32).
#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(TILE * ROWS) transpose_inplace_naive(float *a, int n)
{
    __shared__ float tA[TILE][TILE + 1];
    __shared__ float tB[TILE][TILE + 1];

    // decode the linear block index into an upper-triangle tile pair (ti <= tj)
    const long long nt = (n + TILE - 1) / TILE;
    const long long p = blockIdx.x;
    if (p >= nt * (nt + 1) / 2) return;
    // start(r) = r * nt - r * (r - 1) / 2 = index of the first pair of tile row r
    const double q = (double)(2 * nt + 1);
    long long ti = (long long)((q - sqrt(q * q - 8.0 * (double)p)) * 0.5);
    if (ti < 0) ti = 0;
    if (ti > nt - 1) ti = nt - 1;
    while (ti > 0 && ti * nt - ti * (ti - 1) / 2 > p) --ti;
    while (ti + 1 < nt && (ti + 1) * nt - (ti + 1) * ti / 2 <= p) ++ti;
    const long long tj = ti + (p - (ti * nt - ti * (ti - 1) / 2));

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int rA = (int)ti * TILE; // tile A: rows rA.., cols cA..
    const int cA = (int)tj * TILE; // tile B (mirror): rows cA.., cols rA..
    const bool diag = (ti == tj);

    // load tile A (row-contiguous)
#pragma unroll
    for (int k = 0; k < TILE; k += ROWS) {
        const int r = rA + ty + k, c = cA + tx;
        if (r < n && c < n) tA[ty + k][tx] = a[(size_t)r * n + c];
    }
    // load tile B (row-contiguous)
    if (!diag) {
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = cA + ty + k, c = rA + tx;
            if (r < n && c < n) tB[ty + k][tx] = a[(size_t)r * n + c];
        }
    }
    __syncthreads();

    // a[rA + i][cA + j] = old a[cA + j][rA + i]
#pragma unroll
    for (int k = 0; k < TILE; k += ROWS) {
        const int i = ty + k, j = tx;
        const int r = rA + i, c = cA + j;
        if (r < n && c < n) a[(size_t)r * n + c] = diag ? tA[j][i] : tB[j][i];
    }
    // a[cA + i][rA + j] = old a[rA + j][cA + i]
    if (!diag) {
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int i = ty + k, j = tx;
            const int r = cA + i, c = rA + j;
            if (r < n && c < n) a[(size_t)r * n + c] = tA[j][i];
        }
    }
}
