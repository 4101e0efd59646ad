// unseen2/02_gelu_bf16_double_promotion / fixed: the same formula in fp32 (f-suffixed literals, v*v*v,
// tanhf), as the Best Practices Guide prescribes and llm.c's gelu_forward writes it. The result is rounded
// to bf16 either way, so the two agree to one bf16 ulp. Same launch as the slow kernel.
#include <cuda_bf16.h>

#define GELU_SCALING_FACTOR 0.7978845608028654f  // sqrt(2 / pi)

extern "C" __global__ void gelu_tanh_bf16_f32(const __nv_bfloat16 *in, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __bfloat162float(in[i]);
        float cube = 0.044715f * v * v * v;
        float g = 0.5f * v * (1.0f + tanhf(GELU_SCALING_FACTOR * (v + cube)));
        out[i] = __float2bfloat16(g);
    }
}
