// unseen2/28_crossentropy_fused_row_per_thread / fixed: one warp per row with the online softmax
// recurrence (Milakov & Gimelshein, "Online normalizer calculation for softmax", 2018), as
// karpathy/llm.c dev/cuda/classifier_fused.cu `fused_classifier_kernel1` / `prepare_softmax`
// (MIT; cooperative-groups reductions written here as __shfl_xor_sync). Lane-strided coalesced
// reads, one pass for (max, sum), one pass for the gradient.
// Launch: block (32, ROWS), grid ceil(BT / ROWS).
#include <cuda_fp16.h>
#ifndef ROWS
#define ROWS 4
#endif

extern "C" __global__ void fused_classifier_warp_per_row(__half *dlogits, float *losses, const __half *logits,
                                                         const float *dlosses, const int *targets, int BT, int V)
{
    const int i = blockIdx.x * ROWS + threadIdx.y;
    if (i >= BT)
        return;
    const int lane = threadIdx.x;
    const __half *x = logits + (size_t)i * V;
    float maxval = -INFINITY, sumval = 0.0f;
    for (int v = lane; v < V; v += 32) {
        float xv = __half2float(x[v]);
        float old_maxval = maxval;
        maxval = fmaxf(maxval, xv);
        sumval *= expf(old_maxval - maxval);
        sumval += expf(xv - maxval);
    }
    float global_max = maxval;
    for (int off = 16; off > 0; off >>= 1)
        global_max = fmaxf(global_max, __shfl_xor_sync(0xffffffffu, global_max, off));
    // A lane that saw no element (V < 32) has maxval = -inf and sumval = 0: contributes 0.
    sumval = maxval == -INFINITY ? 0.0f : sumval * expf(maxval - global_max);
    for (int off = 16; off > 0; off >>= 1)
        sumval += __shfl_xor_sync(0xffffffffu, sumval, off);
    const float norm = 1.0f / sumval;
    const int ix = targets[i];
    if (lane == 0)
        losses[i] = -logf(expf(__half2float(x[ix]) - global_max) * norm);
    const float dloss = dlosses[i];
    __half *dx = dlogits + (size_t)i * V;
    for (int v = lane; v < V; v += 32) {
        float prob = expf(__half2float(x[v]) - global_max) * norm;
        float indicator = v == ix ? 1.0f : 0.0f;
        dx[v] = __float2half((prob - indicator) * dloss);
    }
}
