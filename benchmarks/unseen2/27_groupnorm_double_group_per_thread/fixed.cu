// unseen2/27_groupnorm_double_group_per_thread / fixed: one block per (sample, group): the group's
// contiguous C/G*HW doubles are read block-strided (coalesced), sums reduced with warp shuffles
// and shared memory (two passes, as the reference), then the same block writes y. This is the
// layout of PyTorch's CUDA GroupNorm (aten/src/ATen/native/cuda/group_norm_kernel.cu,
// `RowwiseMomentsCUDAKernel`: one block per (n, g) row, BSD-3) and of apex / cuDNN-free ports.
// Launch: block BLOCK (multiple of 32), grid N * G.
#ifndef BLOCK
#define BLOCK 256
#endif
typedef long long i64;

__device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ double block_sum(double v, double *scratch)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    double t = threadIdx.x < BLOCK / 32 ? scratch[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        t = warp_sum(t);
    if (threadIdx.x == 0)
        scratch[32] = t;
    __syncthreads();
    t = scratch[32];
    __syncthreads();
    return t;
}

extern "C" __global__ void group_norm_fwd_block_per_group(const double *x, const double *gamma, const double *beta,
                                                          double *y, int N, int C, int HW, int G, double eps)
{
    __shared__ double scratch[33];
    const int ng = blockIdx.x;
    const int cpg = C / G;
    const i64 len = (i64)cpg * HW;
    const double *xg = x + (i64)ng * len;
    double *yg = y + (i64)ng * len;
    const int g = ng % G;
    double s = 0.0;
    for (i64 i = threadIdx.x; i < len; i += BLOCK)
        s += xg[i];
    const double mean = block_sum(s, scratch) / len;
    double v = 0.0;
    for (i64 i = threadIdx.x; i < len; i += BLOCK) {
        const double d = xg[i] - mean;
        v += d * d;
    }
    const double var = block_sum(v, scratch) / len;
    const double rstd = 1.0 / sqrt(var + eps);
    for (i64 i = threadIdx.x; i < len; i += BLOCK) {
        const int c = g * cpg + (int)(i / HW);
        yg[i] = (xg[i] - mean) * rstd * gamma[c] + beta[c];
    }
}
