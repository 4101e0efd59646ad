// Textbook fix: one warp per row. Lanes stride along the row (coalesced 128-byte loads), then a
// butterfly of warp shuffles sums the 32 partial dot products. 8 rows per 256-thread block.
extern "C" __global__ void gemv_warp_per_row(const float* __restrict__ mat, const float* __restrict__ vec,
                                             float* __restrict__ out, long long rows, long long cols)
{
    long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* a = mat + row * cols;
    float sum = 0.0f;
    for (long long c = lane; c < cols; c += 32) sum += a[c] * vec[c];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) out[row] = sum;
}
