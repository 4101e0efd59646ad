// sum over a grid-stride loop, one atomicAdd(double *) per element, launched with one thread per element
extern "C" __global__ void total_f64(const double *v, double *total, int n)
{
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
        atomicAdd(&total[0], v[k]);
}
