// unseen/13_layernorm_row_per_thread / fixed: one warp per row (llm.c layernorm_forward_kernel3's
// scheme, written here with shuffles instead of cooperative groups): lane-strided coalesced passes,
// __shfl_xor_sync reductions of the sum and of the squared deviations.
// Launch: block (32, ROWS_PER_BLOCK), grid ceil(N / ROWS_PER_BLOCK)  (spec: [variants."fixed.cu"]).
#ifndef ROWS_PER_BLOCK
#define ROWS_PER_BLOCK 8
#endif

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void layernorm_warp_per_row(float *out, float *mean, float *rstd, const float *inp,
                                                 const float *weight, const float *bias, int N, int C,
                                                 float eps)
{
    const int lane = threadIdx.x;
    const int idx = blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
    if (idx >= N)
        return;
    const float *x = inp + (size_t)idx * C;
    float m = 0.0f;
    for (int i = lane; i < C; i += 32)
        m += x[i];
    m = warp_sum(m) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float xshift = x[i] - m;
        v += xshift * xshift;
    }
    v = warp_sum(v) / C;
    float s = 1.0f / sqrtf(v + eps);
    float *out_idx = out + (size_t)idx * C;
    for (int i = lane; i < C; i += 32)
        out_idx[i] = (s * (x[i] - m)) * weight[i] + bias[i];
    if (lane == 0) {
        mean[idx] = m;
        rstd[idx] = s;
    }
}
