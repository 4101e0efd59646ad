// Reduction #1 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007; cuda-samples
// `reduce0`): interleaved addressing with the divergent `tid % (2*s) == 0` test, each block writing its
// partial sum. Highly divergent warps and a slow modulo at every step.
#define BLOCK 256
extern "C" __global__ void block_sums(const float* g_in, float* g_partial, unsigned int n)
{
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_partial[blockIdx.x] = sdata[0];
}
