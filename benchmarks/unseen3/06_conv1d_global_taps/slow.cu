// unseen3/06_conv1d_global_taps / slow: srush/GPU-Puzzles Puzzle 11 "1D Convolution" (MIT) computed the
// way the puzzle's statement defines it, out[i] = sum_j a[i + j] * b[j] for i + j < n, before the
// shared-memory answer: one thread per output, all K = 63 taps and signal values read from global memory.
// Each signal value is loaded by 63 threads through L1 (LSU-bound).
extern "C" __global__ void conv1d_naive(float *out, const float *a, const float *b, int size, int b_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < size) {
        float acc = 0.0f;
        for (int j = 0; j < b_size; j++) {
            if (i + j < size) acc += a[i + j] * b[j];
        }
        out[i] = acc;
    }
}
