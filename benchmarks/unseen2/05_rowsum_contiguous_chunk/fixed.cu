// unseen2/05_rowsum_contiguous_chunk / fixed: the coarsened loop of PMPP 4th ed. Fig. 10.15 -- thread t
// sums elements t, t + BLOCK, t + 2*BLOCK, ... (each warp load is 128 contiguous bytes) -- then warp
// shuffles and one shared-memory step across the BLOCK / 32 warps. Same launch as the slow kernel.
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void row_sums_strided(const float *__restrict__ x, float *__restrict__ out, int cols)
{
    __shared__ float warp_sums[BLOCK / 32];
    const float *row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int k = threadIdx.x; k < cols; k += BLOCK)
        s += row[k];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0)
        warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, off);
        if (threadIdx.x == 0)
            out[blockIdx.x] = s;
    }
}
