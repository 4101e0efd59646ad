// unseen2/25_rmsnorm_bf16_row_per_thread / fixed: one block per row, coalesced block-strided
// passes, warp shuffles then a shared-memory pass across warps (llm.c rmsnorm_forward.cu
// `rms_val_kernel` / NVIDIA blog "Faster Parallel Reductions on Kepler"), fused with the apply
// pass so the row is read twice and written once by the same block. BLOCK is a multiple of 32.
// Launch: block BLOCK, grid N.
#include <cuda_bf16.h>
#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void rmsnorm_block_per_row(__nv_bfloat16 *out, float *rms, const __nv_bfloat16 *inp,
                                                 const __nv_bfloat16 *weight, const __nv_bfloat16 *bias, int N,
                                                 int C)
{
    __shared__ float partial[BLOCK / 32];
    const int row = blockIdx.x;
    if (row >= N)
        return;
    const __nv_bfloat16 *x = inp + (size_t)row * C;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < C; i += BLOCK) {
        float xi = __bfloat162float(x[i]);
        ss += xi * xi;
    }
    ss = warp_sum(ss);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < BLOCK / 32 ? partial[threadIdx.x] : 0.0f;
        v = warp_sum(v);
        if (threadIdx.x == 0)
            partial[0] = v;
    }
    __syncthreads();
    const float rms_val = rsqrtf(partial[0] / C);
    __nv_bfloat16 *o = out + (size_t)row * C;
    for (int i = threadIdx.x; i < C; i += BLOCK) {
        float n = __bfloat162float(x[i]) * rms_val;
        o[i] = __float2bfloat16(n * __bfloat162float(weight[i]) + __bfloat162float(bias[i]));
    }
    if (threadIdx.x == 0)
        rms[row] = rms_val;
}
