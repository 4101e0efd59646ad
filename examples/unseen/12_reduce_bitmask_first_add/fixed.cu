// unseen/12_reduce_bitmask_first_add / fixed: same launch, same first add during load, then
// sequential addressing (`lane_id < stride`) down to one warp and __shfl_down_sync for the last
// 64 -> 1 (Harris's reductions #4 and #5 / cuda-samples reduce3 + reduce4, written here).
// A drop-in: no [variants] entry; launched exactly like slow.cu.
#define BLOCK_SIZE 512

extern "C" __global__ void sum_sequential_first_add(const float *data, float *acc, unsigned long long count)
{
    __shared__ float partial[BLOCK_SIZE];
    const unsigned int lane_id = threadIdx.x;
    const unsigned long long first = (unsigned long long)blockIdx.x * (2 * BLOCK_SIZE) + lane_id;
    const unsigned long long second = first + BLOCK_SIZE;
    float x = 0.0f;
    if (first < count)
        x = data[first];
    if (second < count)
        x += data[second];
    partial[lane_id] = x;
    __syncthreads();

    for (unsigned int stride = BLOCK_SIZE / 2; stride > 32; stride >>= 1) {
        if (lane_id < stride)
            partial[lane_id] += partial[lane_id + stride];
        __syncthreads();
    }
    if (lane_id < 32) {
        float v = partial[lane_id] + partial[lane_id + 32];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane_id == 0)
            atomicAdd(acc, v);
    }
}
