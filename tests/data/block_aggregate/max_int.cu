// maximum of an int array, one atomicMax per element
extern "C" __global__ void max_int(const int *vals, int *best, int count)
{
    const int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < count)
        atomicMax(best, vals[idx]);
}
