// unseen/12_reduce_bitmask_first_add / slow: *acc += sum(data[0..count)). Each thread first adds
// two inputs a block apart while loading (Harris's "first add during load"), then the block runs
// an interleaved shared-memory tree selected with a bit mask, `(lane_id & (2*stride - 1)) == 0`:
// the same divergence as the `%` form (most lanes of every warp idle in every round), without the
// modulo. One float atomicAdd per block.
// Contract: blockDim.x == BLOCK_SIZE (power of two); *acc zeroed before the launch.
// Launch: block BLOCK_SIZE, grid ceil(count / (2 * BLOCK_SIZE)).
#define BLOCK_SIZE 512

extern "C" __global__ void sum_bitmask_tree(const float *data, float *acc, unsigned long long count)
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

    for (unsigned int stride = 1; stride < BLOCK_SIZE; stride <<= 1) {
        if ((lane_id & (2 * stride - 1)) == 0)
            partial[lane_id] += partial[lane_id + stride];
        __syncthreads();
    }
    if (lane_id == 0)
        atomicAdd(acc, partial[0]);
}
