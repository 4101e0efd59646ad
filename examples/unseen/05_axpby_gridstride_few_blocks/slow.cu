// Grid-stride axpby (y = a*x + b*y) from NVIDIA's "CUDA Pro Tip: Write Flexible Kernels with Grid-Stride
// Loops" (Mark Harris, 2013), launched the way that post warns against sizing it: one 64-thread block per
// SM, two warps per SM in flight — far too few loads in flight to cover DRAM latency.
extern "C" __global__ void axpby(size_t n, double a, const double* x, double b, double* y)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        y[i] = a * x[i] + b * y[i];
}
