// unseen/14_bf16_add_relu / slow: z = relu(x + y) over bf16 (__nv_bfloat16) vectors, one 2-byte
// element per thread, unsigned index: 64-byte warp requests, 8x the memory instructions of 16-byte
// accesses. The scalar bf16 form of LeetCUDA's element-wise kernels.
// Launch: block 512, grid ceil(n / 512).
#include <cuda_bf16.h>

extern "C" __global__ void bf16_add_relu(const __nv_bfloat16 *x, const __nv_bfloat16 *y, __nv_bfloat16 *z,
                                         unsigned int n)
{
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) {
        float s = __bfloat162float(x[k]) + __bfloat162float(y[k]);
        z[k] = __float2bfloat16(s > 0.0f ? s : 0.0f);
    }
}
