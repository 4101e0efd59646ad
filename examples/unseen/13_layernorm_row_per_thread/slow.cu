// unseen/13_layernorm_row_per_thread / slow: LayerNorm forward over the last dimension, one thread
// per row (karpathy/llm.c dev/cuda/layernorm_forward.cu `layernorm_forward_kernel1`, adapted):
// three serial passes over the row (mean, variance, normalise + affine), saving mean and rstd.
// Lanes of a warp walk 32 different rows C floats apart: uncoalesced, latency-bound loops.
// Launch: block 128, grid ceil(N / 128).
extern "C" __global__ void layernorm_row_per_thread(float *out, float *mean, float *rstd, const float *inp,
                                                   const float *weight, const float *bias, int N, int C,
                                                   float eps)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        const float *x = inp + (size_t)idx * C;
        float m = 0.0f;
        for (int i = 0; i < C; i++)
            m += x[i];
        m = m / C;
        float v = 0.0f;
        for (int i = 0; i < C; i++) {
            float xshift = x[i] - m;
            v += xshift * xshift;
        }
        v = v / C;
        float s = 1.0f / sqrtf(v + eps);
        float *out_idx = out + (size_t)idx * C;
        for (int i = 0; i < C; i++)
            out_idx[i] = (s * (x[i] - m)) * weight[i] + bias[i];
        mean[idx] = m;
        rstd[idx] = s;
    }
}
