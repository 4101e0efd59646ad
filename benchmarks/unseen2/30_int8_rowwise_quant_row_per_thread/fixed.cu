// unseen2/30_int8_rowwise_quant_row_per_thread / fixed: one block per row (the layout of
// bitsandbytes' CUDA `kInt8VectorQuant`, csrc/kernels.cu, MIT): block-strided coalesced loads,
// the row absmax by warp shuffles + shared memory, then the block writes the int8 row.
// The max is exact, so outputs are bit-identical to the reference.
// Launch: block THREADS (multiple of 32), grid rows.
#include <cuda_fp16.h>
#ifndef THREADS
#define THREADS 256
#endif

extern "C" __global__ void quantize_rowwise_int8_block(const __half *A, signed char *out, float *row_scale, int rows,
                                                       int cols)
{
    __shared__ float warp_max[THREADS / 32];
    const int row = blockIdx.x;
    const __half *a = A + (long long)row * cols;
    float m = 0.0f;
    for (int j = threadIdx.x; j < cols; j += THREADS)
        m = fmaxf(m, fabsf(__half2float(a[j])));
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0)
        warp_max[threadIdx.x >> 5] = m;
    __syncthreads();
    float absmax = warp_max[0];
#pragma unroll
    for (int w = 1; w < THREADS / 32; ++w)
        absmax = fmaxf(absmax, warp_max[w]);
    const float inv = 127.0f / absmax;
    signed char *q = out + (long long)row * cols;
    for (int j = threadIdx.x; j < cols; j += THREADS) {
        float v = fminf(fmaxf(__half2float(a[j]) * inv, -127.0f), 127.0f);
        q[j] = (signed char)__float2int_rn(v);
    }
    if (threadIdx.x == 0)
        row_scale[row] = absmax / 127.0f;
}
