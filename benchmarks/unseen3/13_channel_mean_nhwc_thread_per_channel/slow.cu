// unseen3/13_channel_mean_nhwc_thread_per_channel / slow: per-image, per-channel means of a batch of NHWC RGB
// images (tf.reduce_mean(images, axis=[1, 2]), the statistic behind per-image standardisation) in the
// form of TensorFlow's CPU Eigen reduction over the middle dimensions moved to the GPU: one thread per
// (image, channel) output walks the image's H*W pixels with stride C = 3. 3 * N threads in all (latency
// bound), and lanes read 12-byte-strided floats of consecutive images 602 KB apart.
extern "C" __global__ void channel_mean_nhwc(const float *images, float *means, int n_images, int pixels, int channels)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_images * channels) return;
    int n = k / channels, c = k % channels;
    const float *img = images + (size_t)n * pixels * channels;
    float acc = 0.0f;
    for (int p = 0; p < pixels; p++) acc += img[(size_t)p * channels + c];
    means[k] = acc / pixels;
}
