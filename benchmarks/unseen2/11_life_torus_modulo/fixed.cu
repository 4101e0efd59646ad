// unseen2/11_life_torus_modulo / fixed: a 2-D launch gives x and y directly (no division), the torus wrap
// becomes a compare-and-select (only edge cells wrap), and each thread updates 4 neighbouring cells of
// a row, reusing the column sums it shares with its neighbours (the multi-cell-per-thread step of
// Fiser's article). Same rule, same bytes. Launch: block (64, 4),
// grid (ceil(worldWidth / (4 * 64)), ceil(worldHeight / 4)) (spec variant).
#define CELLS 4

extern "C" __global__ void life_kernel_2d(const unsigned char *__restrict__ lifeData, unsigned int worldWidth,
                                          unsigned int worldHeight, unsigned char *__restrict__ resultLifeData)
{
    const unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * CELLS;
    if (y >= worldHeight || x0 >= worldWidth) return;
    const unsigned char *up = lifeData + (size_t)(y == 0 ? worldHeight - 1 : y - 1) * worldWidth;
    const unsigned char *mid = lifeData + (size_t)y * worldWidth;
    const unsigned char *down = lifeData + (size_t)(y == worldHeight - 1 ? 0 : y + 1) * worldWidth;
    unsigned char *res = resultLifeData + (size_t)y * worldWidth;
    // column sums of the three rows at x - 1, x, x + 1, sliding right one cell at a time
    unsigned int xl = x0 == 0 ? worldWidth - 1 : x0 - 1;
    unsigned int colLeft = up[xl] + mid[xl] + down[xl];
    unsigned int colMid = up[x0] + mid[x0] + down[x0];
    for (unsigned int x = x0; x < x0 + CELLS && x < worldWidth; ++x) {
        const unsigned int xr = x + 1 == worldWidth ? 0 : x + 1;
        const unsigned int colRight = up[xr] + mid[xr] + down[xr];
        const unsigned int aliveCells = colLeft + colMid + colRight - mid[x];
        res[x] = aliveCells == 3 || (aliveCells == 2 && mid[x]) ? 1 : 0;
        colLeft = colMid;
        colMid = colRight;
    }
}
