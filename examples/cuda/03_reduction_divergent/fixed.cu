// 03_reduction_divergent / fixed: Harris's later steps (cuda-samples `reduce4`/`reduce6` shape):
//  - first add during the global load, grid-stride so each thread sums many elements (#4, #7);
//  - sequential addressing in shared memory: active threads are contiguous, so whole warps retire
//    together (no divergence) and there are no bank conflicts (#3);
//  - the last 64 -> 1 step with __shfl_down_sync instead of shared memory and barriers (#5, safe
//    since Volta).
// Same contract as reduce_interleaved_divergent (*out += sum(in[0..n)), blockDim.x ==
// REDUCE_BLOCK >= 64, power of two), but correct for ANY grid size; launch about
// 8 x SM-count blocks (one full wave) for a bandwidth-bound pass.
#ifndef REDUCE_BLOCK
#define REDUCE_BLOCK 256
#endif

extern "C" __global__ void reduce_sequential_shfl(const float *in, float *out, int n)
{
    __shared__ float sdata[REDUCE_BLOCK];

    const unsigned int tid = threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x * 2;
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x * 2 + tid; i < (size_t)n; i += stride) {
        sum += in[i];
        if (i + blockDim.x < (size_t)n)
            sum += in[i + blockDim.x];
    }
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        sum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (tid == 0)
            atomicAdd(out, sum);
    }
}
