// unseen2/24_global_avgpool_half / slow: global average pooling of an NCHW fp16 tensor to N x C,
// in the form of BVLC/caffe `AvePoolForward` (src/caffe/layers/pooling_layer.cu, BSD-2) run with
// `global_pooling: true` (kernel = the whole plane): one thread per output walks its H*W plane
// serially. Adapted to __half storage with a float sum. N*C threads; lanes read planes
// 2*H*W bytes apart (uncoalesced), each thread a long serial loop.
// Launch: block 256, grid ceil(N * C / 256).
#include <cuda_fp16.h>

#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

extern "C" __global__ void AvePoolForwardGlobal(const int nthreads, const __half *const bottom_data, const int height,
                                                const int width, __half *const top_data)
{
    CUDA_KERNEL_LOOP(index, nthreads)
    {
        const __half *const bottom_slice = bottom_data + (size_t)index * height * width;
        float aveval = 0;
        for (int h = 0; h < height; ++h) {
            for (int w = 0; w < width; ++w) {
                aveval += __half2float(bottom_slice[h * width + w]);
            }
        }
        top_data[index] = __float2half(aveval / (height * width));
    }
}
