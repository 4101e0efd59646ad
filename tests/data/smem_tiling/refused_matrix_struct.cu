// Matrices passed as structs, as the CUDA C++ Programming Guide's shared-memory chapter writes the
// un-tiled MatMulKernel (Matrix { int width; int height; float* elements; }). Refused by smem-tiling:
// the operands are struct members, not pointer parameters.
typedef struct {
    int width;
    int height;
    float* elements;
} Matrix;

__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C)
{
    float Cvalue = 0;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = 0; e < A.width; ++e)
        Cvalue += A.elements[row * A.width + e] * B.elements[e * B.width + col];
    C.elements[row * C.width + col] = Cvalue;
}
