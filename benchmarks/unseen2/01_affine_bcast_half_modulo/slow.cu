// unseen2/01_affine_bcast_half_modulo / slow: y[r, c] = half(float(x[r, c]) * scale[c] + shift[c]) over a
// row-major (rows x C) fp16 activation with fp32 per-channel parameters broadcast along the rows
// (channels-last affine: mixed dtypes, broadcast). The generic element-wise form: one flat 64-bit index
// per thread, the broadcast column recovered with a 64-bit `%`, one 2-byte element per thread.
// Launch: block 256, grid ceil(rows * C / 256).
#include <cuda_fp16.h>

extern "C" __global__ void affine_bcast_half(const __half *x, const float *scale, const float *shift,
                                             __half *y, long long rows, long long C)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < rows * C) {
        long long c = idx % C;
        y[idx] = __float2half(__half2float(x[idx]) * scale[c] + shift[c]);
    }
}
