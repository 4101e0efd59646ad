// tests/data/elementwise: uint8 -> bf16 per-row affine dequantisation, one byte per thread, the row
// from `/`, a `(size_t)R * L` bound (vectorize-access's broadcast form; written for these tests).
#include <cuda_bf16.h>

extern "C" __global__ void dequant_rows(const unsigned char *codes, const float *step, const int *offset,
                                        __nv_bfloat16 *dst, int R, int L)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (size_t)R * L) {
        int row = (int)(t / L);
        dst[t] = __float2bfloat16((float)((int)codes[t] - offset[row]) * step[row]);
    }
}
