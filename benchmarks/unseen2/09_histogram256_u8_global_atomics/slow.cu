// unseen2/09_histogram256_u8_global_atomics / slow: 256-bin histogram of an 8-bit image with every pixel
// an atomicAdd on the global histogram -- the "global atomics" baseline of N. Sakharnykh, "GPU Pro Tip:
// Fast Histograms Using Shared Atomics on Maxwell" (NVIDIA blog, 2015), written as a size_t grid-stride
// loop over the flattened image. Same-bin collisions within a warp serialise at L2.
// Launch: block 512, grid 32 * sm_count; hist must start at zero.
extern "C" __global__ void histogram256_gmem(const unsigned char *__restrict__ img, size_t npix,
                                             unsigned int *__restrict__ hist)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < npix; p += (size_t)blockDim.x * gridDim.x)
        atomicAdd(&hist[img[p]], 1u);
}
