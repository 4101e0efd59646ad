// 06_register_spills / slow: each thread keeps SMOOTH_LEN = 48 values live in registers (a ring it
// smooths `iters` times: v[k] += 0.25 * (v[k+1] - v[k])), which wants about 64 registers. The
// __launch_bounds__(256, 8) hint (256 threads, 8 blocks per SM) caps ptxas at
// 65536 / (256 * 8) = 32 registers per thread, so it spills: with nvcc 13.0 -arch=sm_90 -O3,
// "160 bytes stack frame, 320 bytes spill stores, 320 bytes spill loads, 32 registers".
// At 2048 resident threads x 160 B the spilled ring (320 KiB per SM) no longer fits in L1,
// so the local-memory traffic goes to L2.
// Launch: grid ceil(n/256), block 256.
#ifndef SMOOTH_LEN
#define SMOOTH_LEN 48
#endif

extern "C" __global__ void __launch_bounds__(256, 8)
smooth_ring_spill(const float *in, float *out, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = in[i];
    float v[SMOOTH_LEN];
#pragma unroll
    for (int k = 0; k < SMOOTH_LEN; ++k)
        v[k] = x * (float)(k + 1) + (float)k * 0.001f;
    for (int it = 0; it < iters; ++it) {
        const float first = v[0];
#pragma unroll
        for (int k = 0; k < SMOOTH_LEN - 1; ++k)
            v[k] = fmaf(v[k + 1] - v[k], 0.25f, v[k]);
        v[SMOOTH_LEN - 1] = fmaf(first - v[SMOOTH_LEN - 1], 0.25f, v[SMOOTH_LEN - 1]);
    }
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < SMOOTH_LEN; ++k)
        acc = fmaf(v[k], (float)((k & 7) + 1), acc);
    out[i] = acc;
}
