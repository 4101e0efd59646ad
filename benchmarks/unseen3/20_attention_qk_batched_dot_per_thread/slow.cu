// unseen3/20_attention_qk_batched_dot_per_thread / slow: the attention scores preatt[b, h, t, t2] = q_t . k_t2 /
// sqrt(hs) (a batched, strided Q K^T over B * NH heads) read straight from the fused [B, T, 3C] qkv buffer, in
// the form of karpathy/llm.c dev/cuda/attention_forward.cu kernel 1 (attention_query_key_kernel1; MIT),
// re-written here: one thread per score, a serial hs-long dot product, -INFINITY above the diagonal.
// No reuse: each q and k row is re-read by T threads, and lanes read k rows 3C floats apart.
#include <math.h>

extern "C" __global__ void attention_query_key(float *preatt, const float *inp, int B, int T, int C, int NH)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int total_threads = B * NH * T * T;
    if (idx < total_threads) {
        int t2 = idx % T;
        int t = (idx / T) % T;
        if (t2 > t) {
            preatt[idx] = -INFINITY;
            return;
        }
        int h = (idx / (T * T)) % NH;
        int b = idx / (NH * T * T);
        int C3 = C * 3;
        int hs = C / NH;
        const float *query_t = inp + b * T * C3 + t * C3 + h * hs;
        const float *key_t2 = inp + b * T * C3 + t2 * C3 + h * hs + C;
        float val = 0.0f;
        for (int i = 0; i < hs; i++) val += query_t[i] * key_t2[i];
        val *= 1.0 / sqrtf(hs);
        preatt[idx] = val;
    }
}
