// unseen2/25_rmsnorm_bf16_row_per_thread / slow: RMSNorm forward (with weight and bias, rms cached
// for the backward) over the last dimension, one thread per row
// (karpathy/llm.c dev/cuda/rmsnorm_forward.cu `rmsnorm_forward_kernel1`, MIT, adapted to bf16
// storage with fp32 math, as llm.c's floatX). Lanes of a warp walk rows C elements apart with
// 2-byte loads: uncoalesced, serial, N / 256 blocks.
// Launch: block 256, grid ceil(N / 256).
#include <cuda_bf16.h>

extern "C" __global__ void rmsnorm_forward_kernel1(__nv_bfloat16 *out, float *rms, const __nv_bfloat16 *inp,
                                                   const __nv_bfloat16 *weight, const __nv_bfloat16 *bias, int N,
                                                   int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;

    if (idx < N) {
        const __nv_bfloat16 *x = inp + idx * C;

        float sum_of_squares = 0.0f;
#pragma unroll
        for (int i = 0; i < C; i++) {
            float xi = __bfloat162float(x[i]);
            sum_of_squares += xi * xi;
        }
        sum_of_squares = sum_of_squares / C;
        float rms_val = rsqrtf(sum_of_squares);

        __nv_bfloat16 *out_idx = out + idx * C;
#pragma unroll
        for (int i = 0; i < C; i++) {
            float n = __bfloat162float(x[i]) * rms_val;
            float o = n * __bfloat162float(weight[i]) + __bfloat162float(bias[i]);
            out_idx[i] = __float2bfloat16(o);
        }
        rms[idx] = rms_val;
    }
}
