// unseen2/17_transpose_inplace_square: in-place transpose of a square fp32 matrix.
// Coalesced version: one block per pair of mirrored 32x32 tiles (tile (by, bx) with bx >= by and its
// mirror (bx, by)). Both tiles are read row-contiguously into padded shared memory, then written back
// row-contiguously with the transposed data: every warp access is 32 consecutive floats (128 bytes).
// Diagonal tiles are transposed within one buffer. Blocks below the diagonal exit at once.
// Launch: block (32, 8), grid (ceil(n / 32), ceil(n / 32)).
#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(256) transpose_inplace_naive(float *a, int n)
{
    __shared__ float tA[TILE][TILE + 1];
    __shared__ float tB[TILE][TILE + 1];
    const int bx = blockIdx.x, by = blockIdx.y;
    if (bx < by) return; // the pair is handled by block (by, bx)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int rA = by * TILE; // tile A: rows rA.., cols cA..
    const int cA = bx * TILE; // tile B (mirror): rows cA.., cols rA..
    const bool diag = (bx == by);

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
