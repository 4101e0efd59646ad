// unseen2/26_batchnorm_train_channel_per_thread / slow: BatchNorm2d training forward on NCHW fp32
// (batch statistics: mean and biased variance per channel, saved mean / invstd, affine output),
// one thread per channel: the per-channel loop of PyTorch's CPU path
// (pytorch/pytorch aten/src/ATen/native/Normalization.cpp `batch_norm_cpu_update_stats_template`
// then `batch_norm_cpu_transform_input_template`, BSD-3) moved onto the GPU as is.
// C threads in all (one block); each walks N*H*W elements three times.
// Launch: block 64, grid ceil(C / 64).
extern "C" __global__ void batchnorm_train_fwd_per_channel(const float *__restrict__ x, const float *__restrict__ gamma,
                                                           const float *__restrict__ beta, float *__restrict__ y,
                                                           float *__restrict__ save_mean,
                                                           float *__restrict__ save_invstd, int N, int C, int HW,
                                                           float eps)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    const long long count = (long long)N * HW;
    float sum = 0.0f;
    for (int n = 0; n < N; ++n)
        for (int i = 0; i < HW; ++i)
            sum += x[((long long)n * C + c) * HW + i];
    const float mean = sum / count;
    float var_sum = 0.0f;
    for (int n = 0; n < N; ++n)
        for (int i = 0; i < HW; ++i) {
            const float d = x[((long long)n * C + c) * HW + i] - mean;
            var_sum += d * d;
        }
    const float invstd = rsqrtf(var_sum / count + eps);
    const float w = gamma[c] * invstd;
    const float b = beta[c] - mean * w;
    for (int n = 0; n < N; ++n)
        for (int i = 0; i < HW; ++i) {
            const long long off = ((long long)n * C + c) * HW + i;
            y[off] = x[off] * w + b;
        }
    save_mean[c] = mean;
    save_invstd[c] = invstd;
}
