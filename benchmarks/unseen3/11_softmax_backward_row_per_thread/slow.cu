// unseen3/11_softmax_backward_row_per_thread / slow: the softmax gradient of Apache MXNet
// (src/operator/nn/softmax-inl.h, SoftmaxGrad's CPU loop with OP1 = mul, OP2 = softmax_bwd; Apache-2.0),
// igrad = out * (ograd - sum(ograd * out)), as one GPU thread per row of a [rows, dim] matrix: two serial
// passes, lanes dim floats apart.
extern "C" __global__ void softmax_grad_rows(const float *out, const float *ograd, float *igrad, int rows, int dim)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    size_t base = (size_t)i * dim;
    float sum = 0;
    for (int j = 0; j < dim; ++j) sum += ograd[base + j] * out[base + j];
    for (int j = 0; j < dim; ++j) igrad[base + j] = out[base + j] * (ograd[base + j] - sum);
}
