// tests/data/elementwise: per-channel affine over a channels-last half tensor, flat 64-bit index,
// the channel from `%`, float parameters broadcast along the rows (vectorize-access's broadcast form;
// written for these tests).
#include <cuda_fp16.h>

extern "C" __global__ void channel_affine(const __half *act, const float *gamma, const float *beta, __half *res,
                                          long long rows, long long C)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * C) {
        long long ch = e % C;
        res[e] = __float2half(__half2float(act[e]) * gamma[ch] + beta[ch]);
    }
}
