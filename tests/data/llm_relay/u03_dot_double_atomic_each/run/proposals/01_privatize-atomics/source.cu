// unseen2/03_dot_double_atomic_each: fp64 dot product into one global accumulator.
// Privatized version: each thread accumulates its grid-stride share of a[i] * b[i] in a register,
// the block combines the 256 partials with warp shuffles and an 8-slot shared-memory stage, and only
// thread 0 of each block issues one atomicAdd(double *) on result (one atomic per block instead of
// one per element).
// Launch: block 256, grid min(ceil(n / 256), sm_count * 8); result must start at zero.
#define DOT_THREADS 256

extern "C" __global__ void __launch_bounds__(DOT_THREADS) dot_atomic(const double *a, const double *b, double *result, int n)
{
    __shared__ double warp_sums[DOT_THREADS / 32];
    const int stride = gridDim.x * blockDim.x;
    double acc0 = 0.0, acc1 = 0.0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + stride < n; i += 2 * stride) {
        acc0 += __ldg(a + i) * __ldg(b + i);
        acc1 += __ldg(a + i + stride) * __ldg(b + i + stride);
    }
    if (i < n)
        acc0 += __ldg(a + i) * __ldg(b + i);
    double v = acc0 + acc1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int nwarps = (blockDim.x + 31) >> 5;
        double t = (lane < nwarps) ? warp_sums[lane] : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            t += __shfl_xor_sync(0xffffffffu, t, o);
        if (lane == 0)
            atomicAdd(result, t);
    }
}
