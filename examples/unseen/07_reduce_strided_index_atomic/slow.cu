// Reduction #2 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007; cuda-samples
// `reduce1`): strided index `index = 2*s*tid` (no divergence, but shared-memory bank conflicts), then one
// atomicAdd per block into a single integer accumulator (exact, order-independent).
extern "C" __global__ void sum_atomic(const int* data, int* total, int len)
{
    extern __shared__ int buf[];
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    buf[t] = g < len ? data[g] : 0;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s <<= 1) {
        int index = 2 * s * t;
        if (index < blockDim.x) buf[index] += buf[index + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, buf[0]);
}
