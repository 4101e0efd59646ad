// Square matmul P = M * N in the style of the textbook kernel of Kirk & Hwu, "Programming Massively
// Parallel Processors" (ch. 4, the simple MatrixMulKernel), as it circulates in public code, e.g.
// NTNU-HPC-Lab/LS-CAT data/kernels/14541/3/MatrixMulKernel.cu: matrices named Md/Nd/Pd, the row and
// column from blockIdx * BLOCK_SIZE (a macro, not blockDim), and NO bounds check: the launch must
// cover Width x Width exactly (Width a multiple of BLOCK_SIZE).
#define BLOCK_SIZE 16

extern "C" __global__ void MatrixMulKernel(float* Md, float* Nd, float* Pd, int Width)
{
    // Calculate the row index of the Pd element and M
    int Row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    // Calculate the column index of Pd and N
    int Col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float Pvalue = 0;
    // each thread computes one element of the block sub-matrix
    for (int k = 0; k < Width; ++k)
        Pvalue += Md[Row * Width + k] * Nd[k * Width + Col];
    Pd[Row * Width + Col] = Pvalue;
}
