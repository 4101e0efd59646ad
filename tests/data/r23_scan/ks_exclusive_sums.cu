// An exclusive int scan of 512-element sections with the section totals for a second pass: the
// neighbour read into a temporary, `+=` after the barrier, barriers at both ends of the step.
#define SEC 512
extern "C" __global__ void ks_exclusive(const int *in, int *out, int *sums, int n)
{
    __shared__ int buf[SEC];
    const int tid = threadIdx.x;
    const int g = blockIdx.x * SEC + tid;
    buf[tid] = g < n ? in[g] : 0;
    for (int s = 1; s < SEC; s <<= 1) {
        __syncthreads();
        int tmp = 0;
        if (tid >= s) tmp = buf[tid - s];
        __syncthreads();
        buf[tid] += tmp;
    }
    __syncthreads();
    if (g < n) out[g] = tid > 0 ? buf[tid - 1] : 0;
    if (tid == SEC - 1) sums[blockIdx.x] = buf[tid];
}
