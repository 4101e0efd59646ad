// unseen2/23_maxpool2d_plane_per_thread / fixed: one thread per pooled output in a grid-stride
// loop, as BVLC/caffe's GPU kernel `MaxPoolForward` (src/caffe/layers/pooling_layer.cu, BSD-2;
// CUDA_KERNEL_LOOP, CAFFE_CUDA_NUM_THREADS = 512). Neighbouring threads read neighbouring windows.
// Same window order and strict '>' as the CPU loop: identical outputs and mask.
// Launch: block 512, grid ceil(num * channels * pooled_height * pooled_width / 512).
#include <cfloat>

#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

extern "C" __global__ void MaxPoolForward(const float *bottom_data, int num, int channels, int height, int width,
                                          int pooled_height, int pooled_width, int kernel_size, int stride, int pad,
                                          float *top_data, int *mask)
{
    const int nthreads = num * channels * pooled_height * pooled_width;
    CUDA_KERNEL_LOOP(index, nthreads)
    {
        const int pw = index % pooled_width;
        const int ph = (index / pooled_width) % pooled_height;
        const int c = (index / pooled_width / pooled_height) % channels;
        const int n = index / pooled_width / pooled_height / channels;
        int hstart = ph * stride - pad;
        int wstart = pw * stride - pad;
        const int hend = min(hstart + kernel_size, height);
        const int wend = min(wstart + kernel_size, width);
        hstart = max(hstart, 0);
        wstart = max(wstart, 0);
        float maxval = -FLT_MAX;
        int maxidx = -1;
        const float *const bottom_slice = bottom_data + (long)(n * channels + c) * height * width;
        for (int h = hstart; h < hend; ++h) {
            for (int w = wstart; w < wend; ++w) {
                if (bottom_slice[h * width + w] > maxval) {
                    maxidx = h * width + w;
                    maxval = bottom_slice[maxidx];
                }
            }
        }
        top_data[index] = maxval;
        mask[index] = maxidx;
    }
}
