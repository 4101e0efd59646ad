// unseen3/10_causal_softmax_row_per_thread / slow: the causal attention softmax of karpathy/llm.c
// dev/cuda/attention_forward.cu, kernel 1's softmax step (attention_softmax_kernel1; MIT), re-written here:
// one thread per (b, t, h) row of the [B, NH, T, T] pre-attention scores, three serial passes over the
// t + 1 unmasked entries (max, exp + sum, normalise) and zeros after the diagonal. Lanes walk rows T floats
// apart (uncoalesced) and the row lengths differ from lane to lane.
extern "C" __global__ void attention_softmax_rows(float *att, const float *preatt, int B, int T, int NH)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int total_threads = B * T * NH;
    if (idx < total_threads) {
        int h = idx % NH;
        int t = (idx / NH) % T;
        int b = idx / (NH * T);
        const float *preatt_bth = preatt + b * NH * T * T + h * T * T + t * T;
        float *att_bth = att + b * NH * T * T + h * T * T + t * T;
        float maxval = -10000.0f;
        for (int t2 = 0; t2 <= t; t2++) {
            if (preatt_bth[t2] > maxval) maxval = preatt_bth[t2];
        }
        float expsum = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
            float expv = expf(preatt_bth[t2] - maxval);
            expsum += expv;
            att_bth[t2] = expv;
        }
        float expsum_inv = expsum == 0.0f ? 0.0f : 1.0f / expsum;
        for (int t2 = 0; t2 < T; t2++) {
            if (t2 <= t) att_bth[t2] *= expsum_inv;
            else att_bth[t2] = 0.0f;
        }
    }
}
