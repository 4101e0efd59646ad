// Textbook fix: sequential addressing to one warp, warp shuffles for the last 32, one atomicAdd per block.
extern "C" __global__ void sum_atomic_seq(const int* data, int* total, int len)
{
    extern __shared__ int buf[];
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    buf[t] = g < len ? data[g] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t < 32) {
        int v = buf[t] + buf[t + 32];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (t == 0) atomicAdd(total, v);
    }
}
