// 03_reduction_divergent / slow: Mark Harris's reduction #1 (cuda-samples `reduce0`): interleaved
// addressing with `tid % (2*s) == 0`. In every round only every (2s)-th thread works, so all warps
// stay resident but most of their lanes are masked off (divergent branch), plus a costly integer
// modulo per round and a __syncthreads() per round. Each block atomically adds its sum to *out.
// Contract: blockDim.x == REDUCE_BLOCK (a power of two); grid = ceil(n / REDUCE_BLOCK) blocks;
// *out must be zeroed before the launch (the kernel computes *out += sum(in[0..n))).
#ifndef REDUCE_BLOCK
#define REDUCE_BLOCK 256
#endif

extern "C" __global__ void reduce_interleaved_divergent(const float *in, float *out, int n)
{
    __shared__ float sdata[REDUCE_BLOCK];

    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < (unsigned int)n) ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, sdata[0]);
}
