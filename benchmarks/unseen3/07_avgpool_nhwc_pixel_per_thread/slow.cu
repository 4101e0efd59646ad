// unseen3/07_avgpool_nhwc_pixel_per_thread / slow: TensorFlow Lite's reference AveragePool
// (tensorflow/lite/kernels/internal/reference/pooling.h, AveragePool for float; Apache-2.0) moved to the GPU
// with one thread per output pixel (batch, out_y, out_x) looping over the channels: the window is clipped to
// the input and divided by the count of valid taps. NHWC: neighbouring lanes are stride * depth floats
// apart, so every load touches its own sector.
extern "C" __global__ void average_pool_nhwc_pixels(const float *input_data, float *output_data, int batches,
                                                    int input_height, int input_width, int depth,
                                                    int output_height, int output_width, int filter_height,
                                                    int filter_width, int stride_height, int stride_width,
                                                    int pad_height, int pad_width)
{
    int pixel = blockIdx.x * blockDim.x + threadIdx.x;
    if (pixel >= batches * output_height * output_width) return;
    int out_x = pixel % output_width;
    int out_y = (pixel / output_width) % output_height;
    int batch = pixel / (output_width * output_height);
    int in_x_origin = out_x * stride_width - pad_width;
    int in_y_origin = out_y * stride_height - pad_height;
    int filter_x_start = max(0, -in_x_origin);
    int filter_x_end = min(filter_width, input_width - in_x_origin);
    int filter_y_start = max(0, -in_y_origin);
    int filter_y_end = min(filter_height, input_height - in_y_origin);
    for (int channel = 0; channel < depth; ++channel) {
        float total = 0.f;
        float filter_count = 0;
        for (int filter_y = filter_y_start; filter_y < filter_y_end; ++filter_y) {
            for (int filter_x = filter_x_start; filter_x < filter_x_end; ++filter_x) {
                int in_x = in_x_origin + filter_x;
                int in_y = in_y_origin + filter_y;
                total += input_data[((batch * input_height + in_y) * input_width + in_x) * depth + channel];
                filter_count++;
            }
        }
        output_data[((batch * output_height + out_y) * output_width + out_x) * depth + channel] = total / filter_count;
    }
}
