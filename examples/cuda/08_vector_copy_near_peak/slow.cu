// 08_vector_copy_near_peak / slow (and final): out = a * in with 16-byte (float4) loads and stores
// in a grid-stride loop, one full wave of blocks. Every byte moved is needed, every sector fully
// used: the kernel runs near the DRAM roof. No fixed.cu: the expected finding is
// "dram-bandwidth, at ~85-90 % of DRAM peak, little headroom".
// Contract: in and out 16-byte aligned (cudaMalloc is 256-byte aligned); any n (scalar tail).
// Launch: grid = SM count x 8 (one full wave of 256-thread blocks), block 256.
extern "C" __global__ void scale_copy_float4(const float *__restrict__ in, float *__restrict__ out, int n, float a)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t n4 = (size_t)n / 4;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    float4 *out4 = reinterpret_cast<float4 *>(out);
    for (size_t i = tid; i < n4; i += stride) {
        float4 v = in4[i];
        v.x *= a;
        v.y *= a;
        v.z *= a;
        v.w *= a;
        out4[i] = v;
    }
    for (size_t i = n4 * 4 + tid; i < (size_t)n; i += stride)
        out[i] = a * in[i];
}
