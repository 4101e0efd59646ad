// unseen2/17_transpose_inplace_square / fixed: tile-pair swap through shared memory (the in-place variant
// of the cuda-samples / "An Efficient Matrix Transpose" 32 x 33 tile): the block for tile (bx, by) with
// bx > by stages both mirrored tiles, then writes each transposed into the other's place; a diagonal tile
// is transposed onto itself; blocks below the diagonal exit. Every global access is a coalesced row.
// Launch: block (32, 8), grid (ceil(n / 32), ceil(n / 32)) (spec variant).
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_inplace_tiled(float *a, int n)
{
    __shared__ float ta[TILE][TILE + 1];
    __shared__ float tb[TILE][TILE + 1];
    const int bx = blockIdx.x, by = blockIdx.y, x = threadIdx.x;
    if (bx < by) return;  // the pair is handled by block (by, bx)
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const int rowA = by * TILE + r, colA = bx * TILE + x;  // tile A = (by, bx)
        if (rowA < n && colA < n) ta[r][x] = a[(size_t)rowA * n + colA];
        const int rowB = bx * TILE + r, colB = by * TILE + x;  // tile B = (bx, by)
        if (bx != by && rowB < n && colB < n) tb[r][x] = a[(size_t)rowB * n + colB];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const int rowB = bx * TILE + r, colB = by * TILE + x;  // A^T goes where B was
        if (rowB < n && colB < n) a[(size_t)rowB * n + colB] = ta[x][r];
        const int rowA = by * TILE + r, colA = bx * TILE + x;  // B^T goes where A was
        if (bx != by && rowA < n && colA < n) a[(size_t)rowA * n + colA] = tb[x][r];
    }
}
