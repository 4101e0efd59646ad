// 09_histogram_atomics / slow: 256-bin histogram with one global atomicAdd per element.
// On skewed data (7/8 of the values fall in 8 "hot" bins) thousands of threads update the same
// 8 words in L2 at the same time and the atomic units serialise them.
// Contract: bins[HIST_BINS] must be zeroed before the launch (the kernel adds counts);
// value v goes to bin (v & (HIST_BINS - 1)). Any grid (grid-stride loop).
// Launch: grid = SM count x 8, block 256.
#ifndef HIST_BINS
#define HIST_BINS 256
#endif

extern "C" __global__ void histogram_global_atomics(const int *data, int *bins, int n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        atomicAdd(&bins[data[i] & (HIST_BINS - 1)], 1);
}
