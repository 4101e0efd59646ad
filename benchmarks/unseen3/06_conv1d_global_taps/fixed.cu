// unseen3/06_conv1d_global_taps / fix: the tiled 1-D convolution of the puzzle's shared-memory answer (and of
// cuda-samples convolutionSeparable's row pass): a 256-thread block stages its 256 outputs' inputs plus a
// (MAX_TAPS - 1)-wide right halo and the taps in shared memory, zeros past the end; each thread then
// accumulates from shared memory in the same tap order. Same launch.
#define THREADS 256
#define MAX_TAPS 64

extern "C" __global__ void conv1d_tiled(float *__restrict__ out, const float *__restrict__ a,
                                        const float *__restrict__ b, int size, int b_size)
{
    __shared__ float s_a[THREADS + MAX_TAPS - 1];
    __shared__ float s_b[MAX_TAPS];
    int base = blockIdx.x * THREADS;
    for (int k = threadIdx.x; k < THREADS + MAX_TAPS - 1; k += THREADS)
        s_a[k] = (base + k < size) ? a[base + k] : 0.0f;
    if (threadIdx.x < MAX_TAPS) s_b[threadIdx.x] = threadIdx.x < b_size ? b[threadIdx.x] : 0.0f;
    __syncthreads();
    int i = base + threadIdx.x;
    if (i >= size) return;
    float acc = 0.0f;
    for (int j = 0; j < b_size; j++) {
        if (i + j < size) acc += s_a[threadIdx.x + j] * s_b[j];
    }
    out[i] = acc;
}
