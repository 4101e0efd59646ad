// unseen2/31_uint8_dequant_per_channel_bf16 / fixed: 16 weights per thread with one 16-byte load
// and two 16-byte stores (NVIDIA blog "CUDA Pro Tip: Increase Performance with Vectorized Memory
// Access", J. Luitjens, 2013; the packed-load dequantisers of TensorRT-LLM / FasterTransformer
// weight-only GEMM). The flat index of each lane's 16 elements is a multiple of 16, so both the
// uint4 load and the two uint4 stores are aligned for any K; the last N*K % 16 elements go
// through a scalar tail. Same arithmetic per element: bit-identical.
// Launch: block 256, grid ceil(N * K / (16 * 256)) (at least 1).
#include <cuda_bf16.h>

extern "C" __global__ void dequantize_per_channel_u8_x16(const unsigned char *q, const float *scale,
                                                         const int *zero_point, __nv_bfloat16 *w, int N, int K)
{
    const size_t total = (size_t)N * K;
    const size_t vec = total / 16;
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < vec) {
        const size_t base = t * 16;
        const uint4 packed = reinterpret_cast<const uint4 *>(q)[t];
        const unsigned char *b = reinterpret_cast<const unsigned char *>(&packed);
        __align__(16) __nv_bfloat16 res[16];
        int n = (int)(base / K);
        size_t row_end = (size_t)(n + 1) * K;
#pragma unroll
        for (int e = 0; e < 16; ++e) {
            if (base + e == row_end) {  // a 16-element chunk may span a channel boundary (K % 16 != 0)
                ++n;
                row_end += K;
            }
            res[e] = __float2bfloat16((float)((int)b[e] - zero_point[n]) * scale[n]);
        }
        uint4 *dst = reinterpret_cast<uint4 *>(w + base);
        dst[0] = reinterpret_cast<const uint4 *>(res)[0];
        dst[1] = reinterpret_cast<const uint4 *>(res)[1];
    }
    if (t < total - vec * 16) {  // scalar tail, one element per low thread
        const size_t i = vec * 16 + t;
        const int n = (int)(i / K);
        w[i] = __float2bfloat16((float)((int)q[i] - zero_point[n]) * scale[n]);
    }
}
