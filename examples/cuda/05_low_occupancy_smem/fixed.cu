// 05_low_occupancy_smem / fixed: shared memory sized to what is used (a static buffer of
// SCALE_BIAS_BLOCK floats, 1 KiB), launched with 256 threads and no dynamic shared memory:
// 8 blocks x 8 warps = 64 warps per SM, theoretical occupancy 100 %.
// Launch: grid ceil(n/256), block SCALE_BIAS_BLOCK (256), no dynamic smem.
// Contract: blockDim.x <= SCALE_BIAS_BLOCK.
#ifndef SCALE_BIAS_BLOCK
#define SCALE_BIAS_BLOCK 256
#endif

extern "C" __global__ void scale_bias_smem_rightsized(const float *in, float *out, int n, float a, float b)
{
    __shared__ float scratch[SCALE_BIAS_BLOCK];
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    scratch[threadIdx.x] = (i < (size_t)n) ? in[i] : 0.0f;
    __syncwarp();
    if (i < (size_t)n)
        out[i] = fmaf(a, scratch[threadIdx.x], b);
}
