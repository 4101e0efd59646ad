// 05_low_occupancy_smem / slow: a streaming out[i] = a * in[i] + b that stages each element
// through a dynamic shared-memory scratch buffer sized for a worst case it never meets: main.cu
// launches it with 128 threads and 200 KiB of dynamic shared memory per block. It touches only
// 512 bytes of it, but the SM (228 KiB of shared memory on sm_90) can then hold ONE block:
// 4 warps per SM, theoretical occupancy 4/64 = 6.25 %, limiter "shared memory". Every block
// does one load and one store per thread, so almost nothing hides DRAM latency.
// Launch: grid ceil(n/128), block 128, dynamic smem 204800 bytes (needs
// cudaFuncAttributeMaxDynamicSharedMemorySize >= 204800).
// Contract: dynamic shared memory >= blockDim.x * sizeof(float).
extern "C" __global__ void scale_bias_smem_oversized(const float *in, float *out, int n, float a, float b)
{
    extern __shared__ float scratch[];
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    scratch[threadIdx.x] = (i < (size_t)n) ? in[i] : 0.0f;
    __syncwarp();
    if (i < (size_t)n)
        out[i] = fmaf(a, scratch[threadIdx.x], b);
}
