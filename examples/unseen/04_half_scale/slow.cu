// fp16 element-wise scale, one __half per thread (2-byte accesses), in the style of the scalar fp16 kernels
// in NVIDIA's "Mixed-Precision Programming with CUDA 8" blog post (the half2 section is the fix). The
// arithmetic is done in fp32 and rounded once.
#include <cuda_fp16.h>
extern "C" __global__ void scale_half(const __half* in, __half* out, float s, unsigned int count)
{
    unsigned int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < count) out[i] = __float2half(__half2float(in[i]) * s);
}
