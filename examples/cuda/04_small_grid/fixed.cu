// 04_small_grid / fixed: the identical kernel body; the fix is the launch configuration:
// grid = SM count x (max resident threads per SM / 256) = one full wave at 100 % theoretical
// occupancy (132 x 8 = 1056 blocks of 256 threads on an H100 SXM), queried at run time with
// cudaDeviceGetAttribute (see main.cu).
extern "C" __global__ void saxpy_gridstride_full_grid(const float *x, const float *y, float *z, int n, float a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        z[i] = a * x[i] + y[i];
}
