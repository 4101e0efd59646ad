// unseen2/09_histogram256_u8_global_atomics / fixed: Sakharnykh's shared-atomics histogram -- each block
// counts into a 256-bin shared-memory histogram (fast shared atomics since Maxwell) and merges it into the
// global one with one atomicAdd per non-empty bin; pixels are read four at a time (one 32-bit word) while
// the remaining 0-3 pixels of a ragged image are counted one by one.
// Launch: block 512, grid 2 * sm_count (spec variant); hist must start at zero.
#define NUM_BINS 256

extern "C" __global__ void histogram256_smem(const unsigned char *__restrict__ img, size_t npix,
                                             unsigned int *__restrict__ hist)
{
    __shared__ unsigned int smem[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) smem[b] = 0u;
    __syncthreads();
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t nwords = npix / 4;
    const unsigned int *words = reinterpret_cast<const unsigned int *>(img);
    for (size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += stride) {
        unsigned int four = words[w];
        atomicAdd(&smem[four & 0xffu], 1u);
        atomicAdd(&smem[(four >> 8) & 0xffu], 1u);
        atomicAdd(&smem[(four >> 16) & 0xffu], 1u);
        atomicAdd(&smem[four >> 24], 1u);
    }
    for (size_t p = nwords * 4 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < npix; p += stride)
        atomicAdd(&smem[img[p]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = smem[b];
        if (count) atomicAdd(&hist[b], count);
    }
}
