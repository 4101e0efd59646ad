// unseen2/26_batchnorm_train_channel_per_thread / fixed: one block per channel, as PyTorch's CUDA
// `batch_norm_collect_statistics_kernel` (aten/src/ATen/native/cuda/Normalization.cuh, BSD-3)
// lays the work out: the block strides over the N*H*W elements of its channel (contiguous within
// each HW plane, so coalesced), shuffle + shared-memory reductions for the sum and then the
// squared deviations (two passes, as the reference), then the same block writes y.
// Launch: block BLOCK (multiple of 32), grid C.
#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Block-wide sum; every thread gets the result.
__device__ float block_sum(float v, float *scratch)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    float t = threadIdx.x < BLOCK / 32 ? scratch[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        t = warp_sum(t);
    if (threadIdx.x == 0)
        scratch[32] = t;
    __syncthreads();
    t = scratch[32];
    __syncthreads();  // scratch is reused by the next call
    return t;
}

extern "C" __global__ void batchnorm_train_fwd_block_per_channel(const float *__restrict__ x,
                                                                 const float *__restrict__ gamma,
                                                                 const float *__restrict__ beta, float *__restrict__ y,
                                                                 float *__restrict__ save_mean,
                                                                 float *__restrict__ save_invstd, int N, int C,
                                                                 int HW, float eps)
{
    __shared__ float scratch[33];
    const int c = blockIdx.x;
    const long long count = (long long)N * HW;
    float s = 0.0f;
    for (long long e = threadIdx.x; e < count; e += BLOCK) {
        const long long n = e / HW, i = e - n * HW;
        s += x[(n * C + c) * HW + i];
    }
    const float mean = block_sum(s, scratch) / count;
    float v = 0.0f;
    for (long long e = threadIdx.x; e < count; e += BLOCK) {
        const long long n = e / HW, i = e - n * HW;
        const float d = x[(n * C + c) * HW + i] - mean;
        v += d * d;
    }
    const float invstd = rsqrtf(block_sum(v, scratch) / count + eps);
    const float w = gamma[c] * invstd;
    const float b = beta[c] - mean * w;
    for (long long e = threadIdx.x; e < count; e += BLOCK) {
        const long long n = e / HW, i = e - n * HW;
        const long long off = (n * C + c) * HW + i;
        y[off] = x[off] * w + b;
    }
    if (threadIdx.x == 0) {
        save_mean[c] = mean;
        save_invstd[c] = invstd;
    }
}
