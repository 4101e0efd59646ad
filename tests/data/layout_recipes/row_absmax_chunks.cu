// Own slow form for chunk-stride: per-row max |x|, one block per row; each thread folds its own
// contiguous chunk (lanes `chunk` floats apart on every load), then a shared-memory tree.
#ifndef THREADS
#define THREADS 256
#endif

extern "C" __global__ void row_absmax(const float *x, float *out, int n)
{
    __shared__ float best[THREADS];
    const float *row = x + (size_t)blockIdx.x * n;
    int tid = threadIdx.x;
    int chunk = (n + THREADS - 1) / THREADS;
    int first = tid * chunk;
    float m = 0.0f;
    for (int k = first; k < first + chunk && k < n; k++)
        m = fmaxf(m, fabsf(row[k]));
    best[tid] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) best[tid] = fmaxf(best[tid], best[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = best[0];
}
