// unseen2/26_batchnorm_train_channel_per_thread: BatchNorm2d training forward on NCHW fp32
// (batch statistics: mean and biased variance per channel, saved mean / invstd, affine output).
// Cooperative version: one block per channel (the channel's N*HW elements are a long "row" made of N
// contiguous HW segments). Threads stride the flattened (n, i) range with consecutive lanes on
// consecutive addresses (float4 when HW % 4 == 0 and the pointers are 16-byte aligned), reduce with
// warp shuffles and a 32-slot shared-memory stage; the same two-pass algorithm (mean, then the sum of
// squared deviations, then the affine pass) as before.
// Launch: block 256, grid C.
#include <stdint.h>

#define BN_THREADS 256

__device__ __forceinline__ float bn_block_sum(float v, float *sh)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    __syncthreads(); // sh may still be read from a previous call
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    float t = (lane < nwarps) ? sh[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        t += __shfl_xor_sync(0xffffffffu, t, o);
    return t; // every thread holds the block total
}

extern "C" __global__ void __launch_bounds__(BN_THREADS)
batchnorm_train_fwd_per_channel(const float *__restrict__ x, const float *__restrict__ gamma,
                                const float *__restrict__ beta, float *__restrict__ y,
                                float *__restrict__ save_mean, float *__restrict__ save_invstd, int N, int C,
                                int HW, float eps)
{
    __shared__ float sh[32];
    const int c = blockIdx.x;
    if (c >= C) return;
    const long long count = (long long)N * HW;
    const long long cstride = (long long)C * HW; // distance between consecutive n segments
    const float *xc = x + (long long)c * HW;
    float *yc = y + (long long)c * HW;
    const bool vec = ((HW & 3) == 0) && (((((uintptr_t)x) | ((uintptr_t)y)) & 15) == 0);

    // pass 1: sum
    float sum = 0.0f;
    if (vec) {
        const int HW4 = HW >> 2;
        const long long cnt4 = (long long)N * HW4;
        for (long long j = threadIdx.x; j < cnt4; j += blockDim.x) {
            const int n = (int)(j / HW4);
            const int i = (int)(j - (long long)n * HW4);
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            sum += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (long long j = threadIdx.x; j < count; j += blockDim.x) {
            const int n = (int)(j / HW);
            const int i = (int)(j - (long long)n * HW);
            sum += __ldg(xc + n * cstride + i);
        }
    }
    sum = bn_block_sum(sum, sh);
    const float mean = sum / count;

    // pass 2: sum of squared deviations
    float var_sum = 0.0f;
    if (vec) {
        const int HW4 = HW >> 2;
        const long long cnt4 = (long long)N * HW4;
        for (long long j = threadIdx.x; j < cnt4; j += blockDim.x) {
            const int n = (int)(j / HW4);
            const int i = (int)(j - (long long)n * HW4);
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            const float d0 = v.x - mean, d1 = v.y - mean, d2 = v.z - mean, d3 = v.w - mean;
            var_sum += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
        }
    } else {
        for (long long j = threadIdx.x; j < count; j += blockDim.x) {
            const int n = (int)(j / HW);
            const int i = (int)(j - (long long)n * HW);
            const float d = __ldg(xc + n * cstride + i) - mean;
            var_sum += d * d;
        }
    }
    var_sum = bn_block_sum(var_sum, sh);
    const float invstd = rsqrtf(var_sum / count + eps);
    const float w = gamma[c] * invstd;
    const float b = beta[c] - mean * w;

    // pass 3: affine output
    if (vec) {
        const int HW4 = HW >> 2;
        const long long cnt4 = (long long)N * HW4;
        for (long long j = threadIdx.x; j < cnt4; j += blockDim.x) {
            const int n = (int)(j / HW4);
            const int i = (int)(j - (long long)n * HW4);
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            float4 o;
            o.x = v.x * w + b;
            o.y = v.y * w + b;
            o.z = v.z * w + b;
            o.w = v.w * w + b;
            reinterpret_cast<float4 *>(yc + n * cstride)[i] = o;
        }
    } else {
        for (long long j = threadIdx.x; j < count; j += blockDim.x) {
            const int n = (int)(j / HW);
            const int i = (int)(j - (long long)n * HW);
            const long long off = n * cstride + i;
            yc[off] = __ldg(xc + off) * w + b;
        }
    }
    if (threadIdx.x == 0) {
        save_mean[c] = mean;
        save_invstd[c] = invstd;
    }
}
