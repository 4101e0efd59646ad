// unseen3/14_quantize_q8_0_block_per_thread / fix: llama.cpp's CUDA quantiser (ggml/src/ggml-cuda/quantize.cu,
// quantize_q8_1; MIT) layout: one thread per value, a warp per block of 32, the block's max|x| by a
// __shfl_xor_sync butterfly, lane 0 writes the scale; loads and int8 stores coalesced. Bit-identical.
// Launch: 256 threads, grid ceil(nb * 32 / 256).
#include <cuda_fp16.h>
#define QK8_0 32

extern "C" __global__ void quantize_q8_0_warp(const float *__restrict__ x, __half *__restrict__ d_out,
                                              signed char *__restrict__ qs, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // value index; warp w handles block w
    int ib = i / QK8_0;
    if (ib >= nb) return;  // blockDim is a multiple of 32: whole warps leave together
    const float v = x[i];
    float amax = fabsf(v);
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float d = amax / ((1 << 7) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    qs[i] = (signed char)roundf(v * id);
    if (i % QK8_0 == 0) d_out[ib] = __float2half(d);
}
