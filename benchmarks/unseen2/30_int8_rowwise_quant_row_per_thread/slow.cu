// unseen2/30_int8_rowwise_quant_row_per_thread / slow: symmetric per-row ("vector-wise",
// per-token) int8 quantisation of an fp16 activation matrix: absmax of the row, then
// q = round(x * 127 / absmax) and the row scale absmax / 127 (LLM.int8(), Dettmers et al. 2022;
// bitsandbytes `int8_vectorwise_quant` / SmoothQuant per-token quantisation), written with one
// thread per row: two serial passes, lanes reading rows 2*cols bytes apart.
// Launch: block 256, grid ceil(rows / 256).
#include <cuda_fp16.h>

extern "C" __global__ void quantize_rowwise_int8(const __half *A, signed char *out, float *row_scale, int rows,
                                                 int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const __half *a = A + (long long)row * cols;
        float absmax = 0.0f;
        for (int j = 0; j < cols; ++j)
            absmax = fmaxf(absmax, fabsf(__half2float(a[j])));
        const float inv = 127.0f / absmax;
        signed char *q = out + (long long)row * cols;
        for (int j = 0; j < cols; ++j) {
            float v = fminf(fmaxf(__half2float(a[j]) * inv, -127.0f), 127.0f);
            q[j] = (signed char)__float2int_rn(v);
        }
        row_scale[row] = absmax / 127.0f;
    }
}
