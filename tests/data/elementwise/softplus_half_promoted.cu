// tests/data/elementwise: softplus over half data in a grid-stride loop, promoted to fp64 by `20.0`,
// `log1p` and `exp` (demote-double's slow form; written for these tests).
#include <cuda_fp16.h>

extern "C" __global__ void softplus_half_promoted(const __half *x, __half *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = __half2float(x[i]);
        y[i] = __float2half(v > 20.0 ? v : log1p(exp(v)));
    }
}
