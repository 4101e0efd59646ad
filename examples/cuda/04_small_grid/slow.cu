// 04_small_grid / slow: a correct grid-stride z = a*x + y, launched with far too few blocks
// (32 blocks x 256 threads on a 132-SM GPU): 100 of the 132 SMs get no work at all and the
// 32 busy SMs hold 8 warps each, far too few loads in flight to cover DRAM latency.
// The kernel body is fine; the launch configuration is the bug (see main.cu).
// Launch (the slow one): grid 32, block 256.
extern "C" __global__ void saxpy_gridstride_small_grid(const float *x, const float *y, float *z, int n, float a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        z[i] = a * x[i] + y[i];
}
