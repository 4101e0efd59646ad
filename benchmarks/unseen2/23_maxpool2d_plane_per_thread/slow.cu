// unseen2/23_maxpool2d_plane_per_thread / slow: 2-D max pooling (NCHW, square window, stride,
// zero padding) with the argmax mask, written as the straight port of the CPU loop nest of
// BVLC/caffe `PoolingLayer<Dtype>::Forward_cpu` (src/caffe/layers/pooling_layer.cpp, BSD-2):
// the (n, c) loops become the thread index and each thread walks its whole plane (ph, pw, window).
// num * channels threads only (a few blocks for 132 SMs); lanes read planes H*W floats apart.
// Launch: block 128, grid ceil(num * channels / 128).
#include <cfloat>

extern "C" __global__ void max_pool_forward_planes(const float *bottom_data, int num, int channels, int height,
                                                   int width, int pooled_height, int pooled_width, int kernel_size,
                                                   int stride, int pad, float *top_data, int *mask)
{
    int plane = blockIdx.x * blockDim.x + threadIdx.x;
    if (plane >= num * channels)
        return;
    const float *bottom_slice = bottom_data + (long)plane * height * width;
    float *top_slice = top_data + (long)plane * pooled_height * pooled_width;
    int *mask_slice = mask + (long)plane * pooled_height * pooled_width;
    for (int ph = 0; ph < pooled_height; ++ph) {
        for (int pw = 0; pw < pooled_width; ++pw) {
            int hstart = ph * stride - pad;
            int wstart = pw * stride - pad;
            int hend = min(hstart + kernel_size, height);
            int wend = min(wstart + kernel_size, width);
            hstart = max(hstart, 0);
            wstart = max(wstart, 0);
            float maxval = -FLT_MAX;
            int maxidx = -1;
            for (int h = hstart; h < hend; ++h) {
                for (int w = wstart; w < wend; ++w) {
                    const int index = h * width + w;
                    if (bottom_slice[index] > maxval) {
                        maxval = bottom_slice[index];
                        maxidx = index;
                    }
                }
            }
            top_slice[ph * pooled_width + pw] = maxval;
            mask_slice[ph * pooled_width + pw] = maxidx;
        }
    }
}
