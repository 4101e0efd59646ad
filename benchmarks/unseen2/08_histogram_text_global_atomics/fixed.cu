// unseen2/08_histogram_text_global_atomics / fixed: PMPP 4th ed. ch. 9's privatised, coarsened kernel
// (Figs. 9.10 and 9.14, interleaved partitioning): each block counts into a shared-memory copy of the
// 7 bins over a grid-stride loop, then adds its non-zero bins to the global histogram once.
// Launch: block 256, grid 4 * sm_count (spec variant); histo must start at zero.
#define NUM_BINS 7

extern "C" __global__ void histo_private_kernel(const char *data, unsigned int length, unsigned int *histo)
{
    __shared__ unsigned int histo_s[NUM_BINS];
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x)
        histo_s[bin] = 0u;
    __syncthreads();
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned int i = tid; i < length; i += blockDim.x * gridDim.x) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26)
            atomicAdd(&(histo_s[alphabet_position / 4]), 1);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = histo_s[bin];
        if (binValue > 0)
            atomicAdd(&(histo[bin]), binValue);
    }
}
