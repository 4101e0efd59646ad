// unseen2/28_crossentropy_fused_row_per_thread / slow: fused softmax + cross-entropy forward and
// logits gradient (fp16 logits, fp32 losses, fp16 dlogits), one thread per row: the CPU reference
// of karpathy/llm.c dev/cuda/classifier_fused.cu (softmax_forward_cpu, crossentropy_forward_cpu,
// crossentropy_softmax_backward_cpu; MIT) moved onto the GPU with the (b, t) loop as the thread
// index. Three serial passes over V per thread; lanes read rows 2*V bytes apart.
// Launch: block 256, grid ceil(BT / 256).
#include <cuda_fp16.h>

extern "C" __global__ void crossentropy_softmax_rows(__half *dlogits, float *losses, const __half *logits,
                                                     const float *dlosses, const int *targets, int BT, int V)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BT)
        return;
    const __half *x = logits + (size_t)i * V;
    float maxval = -INFINITY;
    for (int v = 0; v < V; v++)
        maxval = fmaxf(maxval, __half2float(x[v]));
    float sum = 0.0f;
    for (int v = 0; v < V; v++)
        sum += expf(__half2float(x[v]) - maxval);
    float norm = 1.0f / sum;
    int ix = targets[i];
    losses[i] = -logf(expf(__half2float(x[ix]) - maxval) * norm);
    float dloss = dlosses[i];
    __half *dx = dlogits + (size_t)i * V;
    for (int v = 0; v < V; v++) {
        float prob = expf(__half2float(x[v]) - maxval) * norm;
        float indicator = v == ix ? 1.0f : 0.0f;
        dx[v] = __float2half((prob - indicator) * dloss);
    }
}
