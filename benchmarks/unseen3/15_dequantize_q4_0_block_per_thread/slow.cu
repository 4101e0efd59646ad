// unseen3/15_dequantize_q4_0_block_per_thread / slow: ggml's Q4_0 dequantisation (ggml-quants.c
// dequantize_row_q4_0; MIT): 32 weights per block, 16 bytes of nibbles and an fp16 scale d,
// y[j] = ((q & 0xF) - 8) * d and y[j + 16] = ((q >> 4) - 8) * d. One GPU thread per block walks its 16 bytes
// and writes 32 floats: lanes write 128 bytes apart.
#include <cuda_fp16.h>
#define QK4_0 32

extern "C" __global__ void dequantize_q4_0_per_block(const __half *d, const unsigned char *qs, float *y, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb) return;
    const float scale = __half2float(d[i]);
    for (int j = 0; j < QK4_0 / 2; ++j) {
        const int x0 = (qs[i * (QK4_0 / 2) + j] & 0x0F) - 8;
        const int x1 = (qs[i * (QK4_0 / 2) + j] >> 4) - 8;
        y[i * QK4_0 + j] = x0 * scale;
        y[i * QK4_0 + j + QK4_0 / 2] = x1 * scale;
    }
}
