// unseen3/10_causal_softmax_row_per_thread / fix: one warp per row (llm.c dev/cuda/softmax_forward.cu's
// warp-per-row kernels; OneFlow's WarpSoftmax): lanes stride the row (coalesced), the max and the sum are
// butterfly-reduced with __shfl_xor_sync, exponentials are recomputed in the write pass instead of stored
// and re-read. Same causal mask, same -10000 floor. Launch: block (32, 8), grid ceil(B*NH*T / 8).
extern "C" __global__ void attention_softmax_warp(float *__restrict__ att, const float *__restrict__ preatt, int B,
                                                  int T, int NH)
{
    int row = blockIdx.x * blockDim.y + threadIdx.y;  // (b, h, t) in storage order
    if (row >= B * NH * T) return;                    // whole warps leave together
    int lane = threadIdx.x;
    int t = row % T;
    const float *x = preatt + (long long)row * T;
    float *y = att + (long long)row * T;
    float maxval = -10000.0f;
    for (int t2 = lane; t2 <= t; t2 += 32) maxval = fmaxf(maxval, x[t2]);
    for (int o = 16; o > 0; o >>= 1) maxval = fmaxf(maxval, __shfl_xor_sync(0xffffffffu, maxval, o));
    float expsum = 0.0f;
    for (int t2 = lane; t2 <= t; t2 += 32) expsum += expf(x[t2] - maxval);
    for (int o = 16; o > 0; o >>= 1) expsum += __shfl_xor_sync(0xffffffffu, expsum, o);
    float expsum_inv = expsum == 0.0f ? 0.0f : 1.0f / expsum;
    for (int t2 = lane; t2 < T; t2 += 32) y[t2] = t2 <= t ? expf(x[t2] - maxval) * expsum_inv : 0.0f;
}
