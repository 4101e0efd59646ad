// 07_compute_bound_fma / slow (and final): each thread runs FMA_CHAINS = 8 independent chains of
// a = fmaf(a, b, c), `iters` steps each (outer loop unrolled 8x so loop overhead is ~5 % of the
// issued instructions). With 8 independent FMAs in flight per thread and 8 warps per scheduler
// the FP32 pipes stay busy: the kernel sits at its compute roof. There is no textbook fix (no
// fixed.cu): the expected finding is "compute-bound, near FP32 peak, little headroom".
// Launch: grid ceil(n/256), block 256.
#ifndef FMA_CHAINS
#define FMA_CHAINS 8
#endif

extern "C" __global__ void fma_chains_compute_bound(const float *in, float *out, int n, int iters, float b, float c)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = in[i];
    float a[FMA_CHAINS];
#pragma unroll
    for (int k = 0; k < FMA_CHAINS; ++k)
        a[k] = x + 0.125f * (float)k;
#pragma unroll 8
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < FMA_CHAINS; ++k)
            a[k] = fmaf(a[k], b, c);
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < FMA_CHAINS; ++k)
        sum += a[k];
    out[i] = sum;
}
