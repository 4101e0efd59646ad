// Naive HGEMM with a 1-D thread index split into row and column (tid / N, tid % N), in the style of
// Ratbuyer/matmul-kernels 1_naive.cuh (kernel_1_naive). Refused by smem-tiling: the row and column do
// not come from a 2-D thread map (a 1-D block cannot hold a TILE x TILE tile).
#include <cuda_fp16.h>

__global__ void kernel_1_naive(half *A, half *B, half *C, int M, int N, int K)
{
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    int row_A = tid / N;
    int col_B = tid % N;
    half acc = 0;
    for (int k = 0; k < K; k++) {
        acc += __hmul(A[row_A * K + k], B[k * N + col_B]);
    }
    C[row_A * N + col_B] = acc;
}
