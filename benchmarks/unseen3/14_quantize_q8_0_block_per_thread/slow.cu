// unseen3/14_quantize_q8_0_block_per_thread / slow: ggml's Q8_0 quantisation (ggml-org/ggml and llama.cpp,
// ggml-quants.c quantize_row_q8_0_ref; MIT): blocks of 32 floats, d = max|x| / 127 stored as fp16,
// q = round(x / d) as int8. Here the reference loop runs as one GPU thread per block of 32 (separate arrays
// for the scales and the quants): each lane reads its own 128-byte block, lanes 128 bytes apart.
#include <cuda_fp16.h>
#define QK8_0 32

extern "C" __global__ void quantize_q8_0_per_block(const float *x, __half *d_out, signed char *qs, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb) return;
    float amax = 0.0f;
    for (int j = 0; j < QK8_0; j++) {
        const float v = x[i * QK8_0 + j];
        amax = fmaxf(amax, fabsf(v));
    }
    const float d = amax / ((1 << 7) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    d_out[i] = __float2half(d);
    for (int j = 0; j < QK8_0; ++j) {
        const float x0 = x[i * QK8_0 + j] * id;
        qs[i * QK8_0 + j] = (signed char)roundf(x0);
    }
}
