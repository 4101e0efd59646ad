// unseen2/03_dot_double_atomic_each / slow: fp64 dot product where every thread adds its product straight
// into the one global accumulator with atomicAdd(double *) -- the "just use atomics" reduction that
// J. Luitjens's "Faster Parallel Reductions on Kepler" (NVIDIA blog, 2014) starts from and PMPP 4th ed.
// ch. 10 warns against. All atomics of the grid serialise on one L2 address.
// Launch: block 256, grid ceil(n / 256); result must start at zero.
extern "C" __global__ void dot_atomic(const double *a, const double *b, double *result, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(result, a[i] * b[i]);
}
