// unseen2/08_histogram_text_global_atomics / slow: the basic text histogram of PMPP 4th ed. ch. 9
// (Fig. 9.6): one character per thread, letters a-z counted into 7 bins of 4 letters
// (alphabet_position / 4), every count an atomicAdd on global memory. All threads of the grid contend for
// 7 L2 addresses. Launch: block 256, grid ceil(length / 256); histo must start at zero.
#define NUM_BINS 7

extern "C" __global__ void histo_kernel(const char *data, unsigned int length, unsigned int *histo)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < length) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26)
            atomicAdd(&(histo[alphabet_position / 4]), 1);
    }
}
