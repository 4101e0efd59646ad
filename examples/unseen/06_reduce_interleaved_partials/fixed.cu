// Textbook fix (Harris #3 + warp shuffles): sequential addressing (`tid < s`, s halving) down to one warp,
// then __shfl_down_sync for the last 32; same per-block partial contract.
#define BLOCK 256
extern "C" __global__ void block_sums_seq(const float* g_in, float* g_partial, unsigned int n)
{
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        float v = sdata[tid] + sdata[tid + 32];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (tid == 0) g_partial[blockIdx.x] = v;
    }
}
