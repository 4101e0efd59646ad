// unseen3/11_softmax_backward_row_per_thread / fix: MXNet's GPU form (softmax-inl.h,
// softmax_stride1_grad_kernel: a block per row, lane-strided loads, a block reduction) in its warp-per-row
// size: lanes stride the row, the dot product is butterfly-reduced with __shfl_xor_sync.
// Launch: block (32, 8), grid ceil(rows / 8).
extern "C" __global__ void softmax_grad_warp(const float *__restrict__ out, const float *__restrict__ ograd,
                                             float *__restrict__ igrad, int rows, int dim)
{
    int i = blockIdx.x * blockDim.y + threadIdx.y;
    if (i >= rows) return;
    size_t base = (size_t)i * dim;
    float sum = 0;
    for (int j = threadIdx.x; j < dim; j += 32) sum += ograd[base + j] * out[base + j];
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    for (int j = threadIdx.x; j < dim; j += 32) igrad[base + j] = out[base + j] * (ograd[base + j] - sum);
}
