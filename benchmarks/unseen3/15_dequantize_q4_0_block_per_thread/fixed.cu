// unseen3/15_dequantize_q4_0_block_per_thread / fix: llama.cpp's CUDA dequantiser layout
// (ggml/src/ggml-cuda/convert.cu, dequantize_block with dequantize_q4_0; MIT): one thread per quant byte,
// 16 consecutive threads per block, so byte loads and both float stores are coalesced. Bit-identical.
// Launch: 256 threads, grid ceil(nb * 16 / 256).
#include <cuda_fp16.h>
#define QK4_0 32

extern "C" __global__ void dequantize_q4_0_per_byte(const __half *__restrict__ d, const unsigned char *__restrict__ qs,
                                                    float *__restrict__ y, int nb)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // quant byte
    if (k >= (long long)nb * (QK4_0 / 2)) return;
    long long ib = k / (QK4_0 / 2);
    int j = (int)(k % (QK4_0 / 2));
    const float scale = __half2float(d[ib]);
    const unsigned char q = qs[k];
    y[ib * QK4_0 + j] = ((q & 0x0F) - 8) * scale;
    y[ib * QK4_0 + j + QK4_0 / 2] = ((q >> 4) - 8) * scale;
}
