// unseen2/03_dot_double_atomic_each: fp64 dot product into one global accumulator.
// Warp-shuffle version: each thread accumulates a grid-stride share of a[i] * b[i] in registers
// (16-byte double2 loads when both pointers are 16-byte aligned, two independent accumulators), the
// 32 lanes of each warp combine their partials with a __shfl_down_sync tree (no shared memory, no
// __syncthreads), and only lane 0 of each warp issues one atomicAdd(double *) on result.
// Launch: block 256, grid min(ceil(n / 512), sm_count * 4); result must start at zero.
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256) dot_atomic(const double *a, const double *b, double *result, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    double acc0 = 0.0, acc1 = 0.0;
    if (((((uintptr_t)a) | ((uintptr_t)b)) & 15) == 0) {
        const int n2 = n >> 1;
        const double2 *a2 = reinterpret_cast<const double2 *>(a);
        const double2 *b2 = reinterpret_cast<const double2 *>(b);
        for (int i = tid; i < n2; i += stride) {
            const double2 x = __ldg(a2 + i);
            const double2 y = __ldg(b2 + i);
            acc0 += x.x * y.x;
            acc1 += x.y * y.y;
        }
        if (tid == 0 && (n & 1))
            acc0 += __ldg(a + n - 1) * __ldg(b + n - 1);
    } else {
        for (int i = tid; i < n; i += stride)
            acc0 += __ldg(a + i) * __ldg(b + i);
    }
    double v = acc0 + acc1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(result, v);
}
