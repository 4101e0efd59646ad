// Row-wise softmax with one thread per row, three passes over the row (max, sum of exp, write), adapted from
// the naive per-row softmax in xlite-dev/LeetCUDA (kernels/softmax) and KernelBench level 1 problem
// 23 "Softmax". Neighbouring threads read addresses a whole row apart: uncoalesced in all three passes.
#define ROW_THREADS 128
extern "C" __global__ void softmax_rows(const float* x, float* y, int n_rows, int n_cols)
{
    int r = blockIdx.x * ROW_THREADS + threadIdx.x;
    if (r < n_rows) {
        const float* in = x + (size_t)r * n_cols;
        float* out = y + (size_t)r * n_cols;
        float m = __int_as_float(0xff800000);
        for (int j = 0; j < n_cols; j++) m = fmaxf(m, in[j]);
        float s = 0.f;
        for (int j = 0; j < n_cols; j++) s += expf(in[j] - m);
        for (int j = 0; j < n_cols; j++) out[j] = expf(in[j] - m) / s;
    }
}
