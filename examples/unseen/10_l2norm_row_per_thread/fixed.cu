// Textbook fix: one block per row (long rows): threads stride along the row, the sum of squares is a warp
// shuffle reduction then a 32-entry shared reduction, and every thread scales its strided elements.
extern "C" __global__ void l2norm_block_rows(const float* x, float* y, int batch, int dim)
{
    __shared__ float warp_sums[32];
    __shared__ float inv_norm;
    int b = blockIdx.x;
    const float* row = x + (size_t)b * dim;
    float ss = 0.0f;
    for (int d = threadIdx.x; d < dim; d += blockDim.x) ss += row[d] * row[d];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) inv_norm = 1.0f / sqrtf(v);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < dim; d += blockDim.x) y[(size_t)b * dim + d] = row[d] * inv_norm;
}
