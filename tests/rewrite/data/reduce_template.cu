// Block sum with a templated block size (Harris #6 shape), a warp-shuffle tail and a launch with an
// explicit template argument. Contract: blockDim.x == BLOCK_SIZE; *out zeroed before the launch.
template <int BLOCK_SIZE = 256>
__global__ void __launch_bounds__(BLOCK_SIZE) block_sum(const float *in, float *out, int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK_SIZE + tid;
    float sum = i < n ? in[i] : 0.0f;
    sdata[tid] = sum;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        sum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (tid == 0)
            atomicAdd(out, sum);
    }
}

void launch_block_sum(const float *in, float *out, int n)
{
    block_sum<256><<<(n + 255) / 256, 256>>>(in, out, n);
}
