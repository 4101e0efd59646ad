// unseen2/02_gelu_bf16_double_promotion / slow: tanh-approximate GELU over bf16 tensors, computed the way
// the formula is usually typed: double literals, pow(v, 3.0) and tanh() promote every element to fp64
// (CUDA C++ Best Practices Guide, "Promotions to Doubles and Truncation to Ints"). fp64 transcendentals
// make an element-wise kernel compute-bound. Launch: block 256, grid ceil(n / 256).
#include <cuda_bf16.h>

extern "C" __global__ void gelu_tanh_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __bfloat162float(in[i]);
        float g = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * pow(v, 3.0))));
        out[i] = __float2bfloat16(g);
    }
}
