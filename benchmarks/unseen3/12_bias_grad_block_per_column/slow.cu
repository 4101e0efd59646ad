// unseen3/12_bias_grad_block_per_column / slow: the bias gradient of a linear layer, dbias[o] += sum over the
// B*T rows of dout[:, o], as karpathy/llm.c dev/cuda/matmul_backward_bias.cu kernel 1 does it
// (matmul_backward_bias_kernel1; MIT), re-written here: one block per output column, threads stride the
// rows, a shared-memory tree. Every lane of a warp reads its own row, OC floats from its neighbour's.
#define BLOCK 512

extern "C" __global__ void bias_grad_block_per_column(float *dbias, const float *dout, int BT, int OC)
{
    __shared__ float shared[BLOCK];
    int o = blockIdx.x;
    int tid = threadIdx.x;
    const float *x = dout + o;
    float sum = 0.0f;
    for (int i = tid; i < BT; i += BLOCK) sum += x[(long)i * OC];
    shared[tid] = sum;
    __syncthreads();
    for (int stride = BLOCK / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (tid < stride) shared[tid] += shared[tid + stride];
    }
    if (tid == 0) dbias[o] += shared[0];
}
