// 09_histogram_atomics / fixed: privatized histogram. Each block counts into its own
// shared-memory copy of the 256 bins (shared-memory atomics, contention limited to one block),
// then merges it into the global bins with at most HIST_BINS global atomics per block.
// Same contract and launch as histogram_global_atomics.
#ifndef HIST_BINS
#define HIST_BINS 256
#endif

extern "C" __global__ void histogram_smem_privatized(const int *data, int *bins, int n)
{
    __shared__ int local_bins[HIST_BINS];
    for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x)
        local_bins[b] = 0;
    __syncthreads();

    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        atomicAdd(&local_bins[data[i] & (HIST_BINS - 1)], 1);
    __syncthreads();

    for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) {
        const int count = local_bins[b];
        if (count != 0)
            atomicAdd(&bins[b], count);
    }
}
