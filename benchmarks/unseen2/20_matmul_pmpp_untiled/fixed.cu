// unseen2/20_matmul_pmpp_untiled / fixed: shared-memory tiled matrix product with boundary checks
// (PMPP 4th ed., ch. 5, Fig. 5.9 `matrixMulKernel` with the Fig. 5.13 boundary tests): each
// TILE_WIDTH x TILE_WIDTH tile of M and N is loaded once per block and reused TILE_WIDTH times.
// Launch: block (TILE_WIDTH, TILE_WIDTH), grid (ceil(Width/TILE_WIDTH), ceil(Width/TILE_WIDTH)).
#ifndef TILE_WIDTH
#define TILE_WIDTH 32
#endif

extern "C" __global__ void matrixMulKernelTiled(float *M, float *N, float *P, int Width)
{
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];

    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int Row = by * TILE_WIDTH + ty;
    int Col = bx * TILE_WIDTH + tx;

    float Pvalue = 0;
    for (int ph = 0; ph < (Width + TILE_WIDTH - 1) / TILE_WIDTH; ++ph) {
        // Out-of-range elements load as 0 so they add nothing (Fig. 5.13).
        if ((Row < Width) && (ph * TILE_WIDTH + tx) < Width)
            Mds[ty][tx] = M[Row * Width + ph * TILE_WIDTH + tx];
        else
            Mds[ty][tx] = 0.0f;
        if ((ph * TILE_WIDTH + ty) < Width && Col < Width)
            Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + Col];
        else
            Nds[ty][tx] = 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k)
            Pvalue += Mds[ty][k] * Nds[k][tx];
        __syncthreads();
    }
    if ((Row < Width) && (Col < Width))
        P[Row * Width + Col] = Pvalue;
}
