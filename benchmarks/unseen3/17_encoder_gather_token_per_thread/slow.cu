// unseen3/17_encoder_gather_token_per_thread / slow: GPT-2's input encoder, out[b, t, :] = wte[inp[b, t], :] +
// wpe[t, :], in the form of karpathy/llm.c dev/cuda/encoder_forward.cu kernel 1 (encoder_forward_kernel1;
// MIT), re-written here: one thread per token copies its whole C-wide row. Lanes read and write rows C
// floats apart (uncoalesced), and B*T = 8192 tokens make only 64 blocks.
extern "C" __global__ void encoder_forward_tokens(float *out, const int *inp, const float *wte, const float *wpe, int B,
                                                  int T, int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T;
    if (idx < N) {
        int b = idx / T;
        int t = idx % T;
        float *out_bt = out + b * T * C + t * C;
        int ix = inp[b * T + t];
        const float *wte_ix = wte + ix * C;
        const float *wpe_t = wpe + t * C;
        for (int i = 0; i < C; i++) out_bt[i] = wte_ix[i] + wpe_t[i];
    }
}
