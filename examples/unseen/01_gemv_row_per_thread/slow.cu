// Row-per-thread matrix-vector product y = A x (KernelBench level 1, problem 4 "Matrix_vector_multiplication_",
// in the one-thread-per-output style of the naive public solutions). Thread `row` walks its own row of A:
// at each step the 32 threads of a warp read 32 addresses `cols` floats apart, so every load instruction
// touches 32 sectors and uses 4 of their 32 bytes.
extern "C" __global__ void gemv_rows(const float* __restrict__ mat, const float* __restrict__ vec,
                                     float* __restrict__ out, long long rows, long long cols)
{
    long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float sum = 0.0f;
    for (long long c = 0; c < cols; ++c) {
        sum += mat[row * cols + c] * vec[c];
    }
    out[row] = sum;
}
