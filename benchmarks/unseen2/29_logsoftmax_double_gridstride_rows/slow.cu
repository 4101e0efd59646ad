// unseen2/29_logsoftmax_double_gridstride_rows / slow: fp64 log-softmax over the last dimension
// with the row logsumexp saved, rows assigned to threads by a grid-stride loop over a grid of
// sm_count blocks of 64 (the "grid-stride loop" launch style of NVIDIA's "CUDA Pro Tip: Write
// Flexible Kernels with Grid-Stride Loops") applied to the two-pass logsumexp of the row
// (max, then sum of exp; the scipy.special.logsumexp / torch.logsumexp algorithm).
// Each thread walks whole rows: lanes 8*C bytes apart, few warps per SM.
// Launch: block 64, grid sm_count.
#include <math.h>

extern "C" __global__ void log_softmax_rows_gridstride(const double *__restrict__ in, double *__restrict__ out,
                                                       double *__restrict__ lse, unsigned rows, unsigned cols)
{
    for (unsigned r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += blockDim.x * gridDim.x) {
        const double *x = in + (size_t)r * cols;
        double m = -HUGE_VAL;
        for (unsigned j = 0; j < cols; ++j)
            m = fmax(m, x[j]);
        double s = 0.0;
        for (unsigned j = 0; j < cols; ++j)
            s += exp(x[j] - m);
        const double l = m + log(s);
        double *y = out + (size_t)r * cols;
        for (unsigned j = 0; j < cols; ++j)
            y[j] = x[j] - l;
        lse[r] = l;
    }
}
