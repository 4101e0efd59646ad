// unseen2/11_life_torus_modulo / slow: one Game of Life generation on a toroidal byte grid, in the form
// of M. Fiser's simpleLifeKernel ("Conway's Game of Life on GPU using CUDA", 2013): a grid-stride loop
// over flat cell ids, the column and the wrapped neighbour rows/columns recovered with `%` on unsigned
// ints for every cell, one byte read per neighbour and one byte written per thread.
// Launch: block 256, grid 16 * sm_count.
extern "C" __global__ void simple_life_kernel(const unsigned char *lifeData, unsigned int worldWidth,
                                              unsigned int worldHeight, unsigned char *resultLifeData)
{
    unsigned int worldSize = worldWidth * worldHeight;
    for (unsigned int cellId = blockIdx.x * blockDim.x + threadIdx.x; cellId < worldSize;
         cellId += blockDim.x * gridDim.x) {
        unsigned int x = cellId % worldWidth;
        unsigned int yAbs = cellId - x;
        unsigned int xLeft = (x + worldWidth - 1) % worldWidth;
        unsigned int xRight = (x + 1) % worldWidth;
        unsigned int yAbsUp = (yAbs + worldSize - worldWidth) % worldSize;
        unsigned int yAbsDown = (yAbs + worldWidth) % worldSize;
        unsigned int aliveCells = lifeData[xLeft + yAbsUp] + lifeData[x + yAbsUp] + lifeData[xRight + yAbsUp]
                                + lifeData[xLeft + yAbs] + lifeData[xRight + yAbs]
                                + lifeData[xLeft + yAbsDown] + lifeData[x + yAbsDown] + lifeData[xRight + yAbsDown];
        resultLifeData[x + yAbs] = aliveCells == 3 || (aliveCells == 2 && lifeData[x + yAbs]) ? 1 : 0;
    }
}
