// unseen3/12_bias_grad_block_per_column / fix: the column-reduction layout of llm.c's later bias kernels and
// PyTorch's Reduce.cuh for a non-contiguous reduced dimension: threadIdx.x runs along 32 consecutive columns
// (coalesced 128-byte rows), threadIdx.y and blockIdx.y split the rows; the 8 partial sums of a column are
// added in shared memory and each block adds its part to dbias with one atomicAdd per column.
// Launch: block (32, 8), grid (ceil(OC / 32), 16).
#define ROW_SPLIT 8

extern "C" __global__ void bias_grad_columns(float *__restrict__ dbias, const float *__restrict__ dout, int BT, int OC)
{
    __shared__ float partial[ROW_SPLIT][33];
    int o = blockIdx.x * 32 + threadIdx.x;
    float sum = 0.0f;
    if (o < OC) {
        for (int i = blockIdx.y * ROW_SPLIT + threadIdx.y; i < BT; i += gridDim.y * ROW_SPLIT) sum += dout[(long)i * OC + o];
    }
    partial[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && o < OC) {
        float total = 0.0f;
        for (int r = 0; r < ROW_SPLIT; r++) total += partial[r][threadIdx.x];
        atomicAdd(&dbias[o], total);
    }
}
