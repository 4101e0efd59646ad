// unseen2/24_global_avgpool_half / fixed: one warp per (n, c) plane, lane-strided coalesced reads
// and a __shfl_xor_sync butterfly sum (the warp-per-row reduction of NVIDIA's "Faster Parallel
// Reductions on Kepler" blog, J. Luitjens, 2014; the per-plane form of PyTorch's
// adaptive_avg_pool / CUB WarpReduce). PLANES_PER_BLOCK warps per block.
// Launch: block (32, PLANES_PER_BLOCK), grid ceil(nthreads / PLANES_PER_BLOCK).
#include <cuda_fp16.h>
#ifndef PLANES_PER_BLOCK
#define PLANES_PER_BLOCK 8
#endif

extern "C" __global__ void global_avgpool_warp_per_plane(const int nthreads, const __half *const bottom_data,
                                                         const int height, const int width, __half *const top_data)
{
    const int plane = blockIdx.x * PLANES_PER_BLOCK + threadIdx.y;
    if (plane >= nthreads)
        return;
    const int hw = height * width;
    const __half *const slice = bottom_data + (size_t)plane * hw;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < hw; i += 32)
        sum += __half2float(slice[i]);
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (threadIdx.x == 0)
        top_data[plane] = __float2half(sum / hw);
}
