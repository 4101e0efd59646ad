// unseen2/29_logsoftmax_double_gridstride_rows / fixed: one warp per row, lane-strided coalesced
// passes and butterfly shuffles for the max and the sum (the `WarpSoftmax` scheme of OneFlow's
// softmax, "How to implement an efficient Softmax CUDA kernel", OneFlow blog 2022; NVIDIA apex
// `softmax_warp_forward`). Enough warps to fill the GPU: ceil(rows / WARPS) blocks.
// Launch: block (32, WARPS), grid ceil(rows / WARPS).
#include <math.h>
#ifndef WARPS
#define WARPS 8
#endif

extern "C" __global__ void log_softmax_warp_rows(const double *__restrict__ in, double *__restrict__ out,
                                                 double *__restrict__ lse, unsigned rows, unsigned cols)
{
    const unsigned r = blockIdx.x * WARPS + threadIdx.y;
    if (r >= rows)
        return;
    const unsigned lane = threadIdx.x;
    const double *x = in + (size_t)r * cols;
    double m = -HUGE_VAL;
    for (unsigned j = lane; j < cols; j += 32)
        m = fmax(m, x[j]);
    for (int off = 16; off > 0; off >>= 1)
        m = fmax(m, __shfl_xor_sync(0xffffffffu, m, off));
    double s = 0.0;
    for (unsigned j = lane; j < cols; j += 32)
        s += exp(x[j] - m);
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    const double l = m + log(s);
    double *y = out + (size_t)r * cols;
    for (unsigned j = lane; j < cols; j += 32)
        y[j] = x[j] - l;
    if (lane == 0)
        lse[r] = l;
}
