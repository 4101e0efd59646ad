// unseen2/26_batchnorm_train_channel_per_thread: BatchNorm2d training forward on NCHW fp32
// (batch statistics: mean and biased variance per channel, saved mean / invstd, affine output).
// More parallel version: grid C * split blocks of 256 threads; block (c, s) owns slice s of channel c's
// N*HW elements (flattened over (n, i), float4 when HW % 4 == 0 and the pointers are 16-byte aligned).
// Each block computes its slice's count, mean and centred sum of squares (two passes over the slice,
// block reductions with warp shuffles), publishes them to a device scratch, and waits until the
// channel's `split` blocks have arrived (the launch keeps C * split within one resident wave:
// split <= (sm_count * 4) / C with __launch_bounds__(256, 4), so all sibling blocks are co-resident).
// Every block merges the partials in the same fixed order (Chan's parallel variance formula), so all
// agree on mean / invstd, then writes y for its own slice. The last block to leave resets the channel's
// counters for the next launch. With split == 1 no scratch or waiting is used.
// Launch: block 256, grid C * max(1, min(4, ceil(N*HW / 2048), (sm_count * 4) / C)).
#include <stdint.h>

#define BN_THREADS 256
#define BN_MAXP (1 << 16)

__device__ float g_bn_cnt[BN_MAXP];
__device__ float g_bn_mean[BN_MAXP];
__device__ float g_bn_m2[BN_MAXP];
__device__ unsigned int g_bn_arrive[BN_MAXP];
__device__ unsigned int g_bn_depart[BN_MAXP];

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

extern "C" __global__ void __launch_bounds__(BN_THREADS, 4)
batchnorm_train_fwd_per_channel(const float *__restrict__ x, const float *__restrict__ gamma,
                                const float *__restrict__ beta, float *__restrict__ y,
                                float *__restrict__ save_mean, float *__restrict__ save_invstd, int N, int C,
                                int HW, float eps)
{
    __shared__ float sh[32];
    __shared__ float s_stats[2];

    int split = (int)(gridDim.x / (unsigned int)C);
    if (split < 1) split = 1;
    const bool use_split = (split > 1) && ((long long)C * split <= BN_MAXP);
    if (!use_split) split = 1;
    const int c = use_split ? (int)blockIdx.x / split : (int)blockIdx.x;
    const int s = use_split ? (int)blockIdx.x % split : 0;
    if (c >= C) return; // block-uniform

    const long long count = (long long)N * HW;
    const long long cstride = (long long)C * HW;
    const float *xc = x + (long long)c * HW;
    float *yc = y + (long long)c * HW;
    const bool vec = ((HW & 3) == 0) && (((((uintptr_t)x) | ((uintptr_t)y)) & 15) == 0);
    const int per = vec ? 4 : 1;
    const int HWu = HW / per;                      // units per n segment
    const long long units = (long long)N * HWu;    // units in the channel
    const long long chunk = (units + split - 1) / split;
    const long long u0 = (long long)s * chunk;
    const long long u1 = (u0 + chunk < units) ? (u0 + chunk) : units;
    const float nb = (u1 > u0) ? (float)((u1 - u0) * per) : 0.0f;

    // pass 1: local sum
    float sum = 0.0f;
    for (long long u = u0 + threadIdx.x; u < u1; u += blockDim.x) {
        const int n = (int)(u / HWu);
        const int i = (int)(u - (long long)n * HWu);
        if (vec) {
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            sum += (v.x + v.y) + (v.z + v.w);
        } else {
            sum += __ldg(xc + n * cstride + i);
        }
    }
    sum = bn_block_sum(sum, sh);
    const float mean_b = (nb > 0.0f) ? sum / nb : 0.0f;

    // pass 2: local centred sum of squares
    float m2 = 0.0f;
    for (long long u = u0 + threadIdx.x; u < u1; u += blockDim.x) {
        const int n = (int)(u / HWu);
        const int i = (int)(u - (long long)n * HWu);
        if (vec) {
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            const float d0 = v.x - mean_b, d1 = v.y - mean_b, d2 = v.z - mean_b, d3 = v.w - mean_b;
            m2 += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
        } else {
            const float d = __ldg(xc + n * cstride + i) - mean_b;
            m2 += d * d;
        }
    }
    m2 = bn_block_sum(m2, sh);

    if (use_split) {
        if (threadIdx.x == 0) {
            const int slot = c * split + s;
            g_bn_cnt[slot] = nb;
            g_bn_mean[slot] = mean_b;
            g_bn_m2[slot] = m2;
            __threadfence();
            atomicAdd(&g_bn_arrive[c], 1u);
            volatile unsigned int *arr = &g_bn_arrive[c];
            while (*arr < (unsigned int)split)
                __nanosleep(64);
            __threadfence();
            // merge the partials in a fixed order (identical in every block of the channel)
            float n_acc = 0.0f, mean = 0.0f, M2 = 0.0f;
            for (int k = 0; k < split; ++k) {
                const int sl = c * split + k;
                const float nk = __ldcg(&g_bn_cnt[sl]);
                if (nk == 0.0f) continue;
                const float mk = __ldcg(&g_bn_mean[sl]);
                const float m2k = __ldcg(&g_bn_m2[sl]);
                const float tot = n_acc + nk;
                const float delta = mk - mean;
                mean += delta * (nk / tot);
                M2 += m2k + delta * delta * (n_acc * nk / tot);
                n_acc = tot;
            }
            s_stats[0] = mean;
            s_stats[1] = rsqrtf(M2 / count + eps);
            // leave; the last block out resets the channel's counters for the next launch
            const unsigned int d = atomicAdd(&g_bn_depart[c], 1u);
            if (d == (unsigned int)(split - 1)) {
                atomicExch(&g_bn_arrive[c], 0u);
                atomicExch(&g_bn_depart[c], 0u);
            }
        }
    } else {
        if (threadIdx.x == 0) {
            s_stats[0] = mean_b;
            s_stats[1] = rsqrtf(m2 / count + eps);
        }
    }
    __syncthreads();
    const float mean = s_stats[0];
    const float invstd = s_stats[1];
    const float w = gamma[c] * invstd;
    const float b = beta[c] - mean * w;

    // pass 3: affine output for this block's slice
    for (long long u = u0 + threadIdx.x; u < u1; u += blockDim.x) {
        const int n = (int)(u / HWu);
        const int i = (int)(u - (long long)n * HWu);
        if (vec) {
            const float4 v = __ldg(reinterpret_cast<const float4 *>(xc + n * cstride) + i);
            float4 o;
            o.x = v.x * w + b;
            o.y = v.y * w + b;
            o.z = v.z * w + b;
            o.w = v.w * w + b;
            reinterpret_cast<float4 *>(yc + n * cstride)[i] = o;
        } else {
            const long long off = n * cstride + i;
            yc[off] = __ldg(xc + off) * w + b;
        }
    }
    if (s == 0 && threadIdx.x == 0) {
        save_mean[c] = mean;
        save_invstd[c] = invstd;
    }
}
