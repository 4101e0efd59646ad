// Textbook fix: one warp per row; lanes stride along the row, max and sum are butterfly shuffle reductions
// (every lane ends with the row's max and sum), the write pass is lane-strided too.
extern "C" __global__ void softmax_warp_rows(const float* x, float* y, int n_rows, int n_cols)
{
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (r >= n_rows) return;
    const float* in = x + (size_t)r * n_cols;
    float* out = y + (size_t)r * n_cols;
    float m = __int_as_float(0xff800000);
    for (int j = lane; j < n_cols; j += 32) m = fmaxf(m, in[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.f;
    for (int j = lane; j < n_cols; j += 32) s += expf(in[j] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int j = lane; j < n_cols; j += 32) out[j] = expf(in[j] - m) / s;
}
