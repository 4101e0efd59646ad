// unseen3/19_histogram_4096_bins_global_atomics / slow: a 4096-bin histogram of 12-bit samples (raw camera /
// CT pixel depth) with one global atomicAdd per sample, the first histogram kernel of J. Sanders and
// E. Kandrot, "CUDA by Example" (Addison-Wesley 2010), ch. 9.4.2 (histo_kernel, global memory atomics;
// the book's code licence permits use), widened from 256 bins and bytes to 4096 bins and 16-bit samples.
extern "C" __global__ void histo_kernel_global(const short *buffer, long size, unsigned int *histo)
{
    long i = threadIdx.x + blockIdx.x * blockDim.x;
    long stride = blockDim.x * gridDim.x;
    while (i < size) {
        atomicAdd(&(histo[buffer[i] & 4095]), 1u);
        i += stride;
    }
}
