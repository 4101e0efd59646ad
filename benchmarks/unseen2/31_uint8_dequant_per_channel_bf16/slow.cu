// unseen2/31_uint8_dequant_per_channel_bf16 / slow: per-output-channel affine dequantisation of
// uint8 weights to bf16, w = (q - zero_point[n]) * scale[n] (the semantics of PyTorch
// `torch.dequantize` for `quantize_per_channel(axis=0)` tensors, torch.ao.quantization), one byte
// per thread with the channel from a division: 1-byte loads and 2-byte stores per thread,
// LSU-bound below the DRAM peak.
// Launch: block 256, grid ceil(N * K / 256).
#include <cuda_bf16.h>

extern "C" __global__ void dequantize_per_channel_u8(const unsigned char *q, const float *scale,
                                                     const int *zero_point, __nv_bfloat16 *w, int N, int K)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)N * K) {
        int n = (int)(i / K);
        w[i] = __float2bfloat16((float)((int)q[i] - zero_point[n]) * scale[n]);
    }
}
