// Row-wise L2 normalisation y = x / ||x||_2 with one thread per row (KernelBench level 1, problem 39
// "L2Norm_", in the naive one-thread-per-row style): two passes over a row that neighbouring threads read
// `dim` floats apart.
extern "C" __global__ void l2norm_rows(const float* x, float* y, int batch, int dim)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch) return;
    const float* row = x + (size_t)b * dim;
    float ss = 0.0f;
    for (int d = 0; d < dim; ++d) ss += row[d] * row[d];
    float inv = 1.0f / sqrtf(ss);
    for (int d = 0; d < dim; ++d) y[(size_t)b * dim + d] = row[d] * inv;
}
