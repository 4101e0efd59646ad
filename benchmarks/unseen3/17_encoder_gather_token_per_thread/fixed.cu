// unseen3/17_encoder_gather_token_per_thread / fix: llm.c encoder_forward.cu kernel 2's layout (one thread per
// output element, the channel fastest), so a warp reads 128 contiguous bytes of the gathered wte row and
// of wpe and writes 128 contiguous bytes. Launch: 256 threads, grid ceil(B*T*C / 256).
extern "C" __global__ void encoder_forward_elements(float *__restrict__ out, const int *__restrict__ inp,
                                                    const float *__restrict__ wte, const float *__restrict__ wpe, int B,
                                                    int T, int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T * C;
    if (idx < N) {
        int bt = idx / C;
        int b = bt / T;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[b * T + t];
        out[idx] = wte[ix * C + c] + wpe[t * C + c];
    }
}
