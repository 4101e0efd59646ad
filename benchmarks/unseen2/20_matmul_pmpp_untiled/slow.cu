// unseen2/20_matmul_pmpp_untiled / slow: square fp32 matrix product P = M * N, one thread per P
// element, no data reuse (PMPP 4th ed., ch. 3, Fig. 3.11 `MatrixMulKernel`, adapted: boundary
// guard on both indices so Width need not be a multiple of the block).
// Every thread streams a row of M and a column of N from global memory: 2 loads per FMA,
// L1/L2-bandwidth bound, far below the FP32 peak.
// Launch: block (16, 16), grid (ceil(Width/16), ceil(Width/16)).
extern "C" __global__ void MatrixMulKernel(float *M, float *N, float *P, int Width)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.y;
    int Col = blockIdx.x * blockDim.x + threadIdx.x;
    if ((Row < Width) && (Col < Width)) {
        float Pvalue = 0;
        for (int k = 0; k < Width; ++k) {
            Pvalue += M[Row * Width + k] * N[k * Width + Col];
        }
        P[Row * Width + Col] = Pvalue;
    }
}
