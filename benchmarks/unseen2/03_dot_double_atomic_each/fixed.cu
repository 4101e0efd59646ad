// unseen2/03_dot_double_atomic_each / fixed: Luitjens's deviceReduceBlockAtomicKernel shape -- a grid-stride
// loop accumulates privately, warps reduce with __shfl_down_sync, warp sums meet in shared memory, and
// one atomicAdd per block reaches global memory. Launch: block 256, grid 8 * sm_count (spec variant).
#define WARP 32

__inline__ __device__ double warp_reduce_sum(double v)
{
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void dot_block_atomic(const double *__restrict__ a, const double *__restrict__ b,
                                            double *result, int n)
{
    __shared__ double warp_sums[WARP];
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += a[i] * b[i];
    const int lane = threadIdx.x % WARP, wid = threadIdx.x / WARP;
    sum = warp_reduce_sum(sum);
    if (lane == 0) warp_sums[wid] = sum;
    __syncthreads();
    if (wid == 0) {
        sum = lane < (int)(blockDim.x / WARP) ? warp_sums[lane] : 0.0;
        sum = warp_reduce_sum(sum);
        if (lane == 0) atomicAdd(result, sum);
    }
}
