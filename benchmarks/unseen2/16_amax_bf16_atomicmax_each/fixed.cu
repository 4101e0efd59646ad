// unseen2/16_amax_bf16_atomicmax_each / fixed: the reduce-then-one-atomic shape of vLLM's per-tensor
// FP8 scale kernel (vllm-project/vllm csrc/quantization/fp8, segmented_max_reduction + atomicMaxFloat): a
// grid-stride loop keeps a private max, warps combine with __shfl_xor_sync, warp maxima meet in shared
// memory, and one atomicMax per block reaches global memory. max is order-independent: exact.
// Launch: block 256, grid 4 * sm_count (spec variant); amax must start at 0.0f.
#include <cuda_bf16.h>

#define THREADS 256

extern "C" __global__ void amax_block_reduce(const __nv_bfloat16 *__restrict__ x, float *amax, int n)
{
    __shared__ float warp_max[THREADS / 32];
    float m = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        m = fmaxf(m, fabsf(__bfloat162float(x[i])));
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
        m = threadIdx.x < THREADS / 32 ? warp_max[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
        if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned int *>(amax), __float_as_uint(m));
    }
}
