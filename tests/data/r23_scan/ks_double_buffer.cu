// A double-buffered inclusive float max-scan of 256-element sections (GPU Gems 3 ch. 39's buffers:
// flat halves, selectors swapped at the top of each step), the section length a parameter.
extern "C" __global__ void ks_double_max(const float *x, float *y, int sec, int n)
{
    __shared__ float temp[512];
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    int g = blockIdx.x * sec + thid;
    temp[pout * sec + thid] = g < n ? x[g] : -1e30f;
    __syncthreads();
    for (int offset = 1; offset < sec; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * sec + thid] = fmaxf(temp[pin * sec + thid], temp[pin * sec + thid - offset]);
        else
            temp[pout * sec + thid] = temp[pin * sec + thid];
        __syncthreads();
    }
    if (g < n) y[g] = temp[pout * sec + thid];
}
