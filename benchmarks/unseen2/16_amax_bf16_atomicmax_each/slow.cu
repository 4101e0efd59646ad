// unseen2/16_amax_bf16_atomicmax_each / slow: absolute maximum of a bf16 tensor (the amax that FP8
// recipes track to pick a scaling factor), each thread doing atomicMax on the fp32 bit pattern of |x|
// in one global word (non-negative IEEE floats order like unsigned ints: the atomicMax-on-float idiom of
// Stack Overflow question 17399119). Every element is an atomic on
// the same L2 address. Launch: block 256, grid ceil(n / 256); amax must start at 0.0f.
#include <cuda_bf16.h>

extern "C" __global__ void amax_atomic(const __nv_bfloat16 *x, float *amax, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = fabsf(__bfloat162float(x[i]));
        atomicMax(reinterpret_cast<unsigned int *>(amax), __float_as_uint(a));
    }
}
