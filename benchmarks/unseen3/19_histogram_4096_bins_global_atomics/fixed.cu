// unseen3/19_histogram_4096_bins_global_atomics / fix: the book's second kernel (ch. 9.4.3, shared memory atomics):
// each block counts into a private 4096-bin histogram in shared memory (16 KiB) and adds its non-zero bins
// to the global one at the end. Same grid-stride launch; exact.
#define BINS 4096

extern "C" __global__ void histo_kernel_shared(const short *__restrict__ buffer, long size, unsigned int *__restrict__ histo)
{
    __shared__ unsigned int temp[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) temp[b] = 0;
    __syncthreads();
    long i = threadIdx.x + blockIdx.x * blockDim.x;
    long stride = blockDim.x * gridDim.x;
    while (i < size) {
        atomicAdd(&temp[buffer[i] & 4095], 1u);
        i += stride;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        if (temp[b]) atomicAdd(&histo[b], temp[b]);
    }
}
