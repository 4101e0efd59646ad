// unseen3/13_channel_mean_nhwc_thread_per_channel / fix: TensorFlow's GPU reduction over middle dimensions
// (tensorflow/core/kernels/reduction_gpu_kernels.cu.h, ReduceMiddleDimensions: a block per outer index;
// Apache-2.0) in its block-per-output form: one 256-thread block per (image, channel) strides the image's
// pixels (lanes 12 bytes apart; the C blocks of one image share its cache lines in L2), warp shuffles and
// shared memory combine the partial sums. 3 * N blocks instead of 3 * N threads.
// Launch: block 256, grid (N, C).
#define THREADS 256

extern "C" __global__ void channel_mean_nhwc_block(const float *__restrict__ images, float *__restrict__ means,
                                                   int n_images, int pixels, int channels)
{
    __shared__ float warp_sums[THREADS / 32];
    int n = blockIdx.x, c = blockIdx.y;
    const float *img = images + (size_t)n * pixels * channels;
    float acc = 0.0f;
    for (int p = threadIdx.x; p < pixels; p += THREADS) acc += img[(size_t)p * channels + c];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < THREADS / 32; w++) total += warp_sums[w];
        means[n * channels + c] = total / pixels;
    }
}
