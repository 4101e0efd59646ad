// unseen3/07_avgpool_nhwc_pixel_per_thread / fix: one thread per output element with the channel fastest
// (the NHWC layout of cuDNN / TF's AvgPoolNHWC GPU kernel, tensorflow/core/kernels/avgpooling_op_gpu.cu.cc,
// Apache-2.0): a warp reads 32 consecutive channels of one input pixel per tap (128 bytes). Same window,
// same tap order, same division. Launch: 256 threads, grid ceil(outputs / 256).
extern "C" __global__ void average_pool_nhwc_channels(const float *__restrict__ input_data,
                                                      float *__restrict__ output_data, int batches,
                                                      int input_height, int input_width, int depth,
                                                      int output_height, int output_width, int filter_height,
                                                      int filter_width, int stride_height, int stride_width,
                                                      int pad_height, int pad_width)
{
    long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= (long long)batches * output_height * output_width * depth) return;
    int channel = (int)(index % depth);
    int pixel = (int)(index / depth);
    int out_x = pixel % output_width;
    int out_y = (pixel / output_width) % output_height;
    int batch = pixel / (output_width * output_height);
    int in_x_origin = out_x * stride_width - pad_width;
    int in_y_origin = out_y * stride_height - pad_height;
    int filter_x_start = max(0, -in_x_origin);
    int filter_x_end = min(filter_width, input_width - in_x_origin);
    int filter_y_start = max(0, -in_y_origin);
    int filter_y_end = min(filter_height, input_height - in_y_origin);
    float total = 0.f;
    float filter_count = 0;
    for (int filter_y = filter_y_start; filter_y < filter_y_end; ++filter_y) {
        const float *row = input_data + ((long long)(batch * input_height + in_y_origin + filter_y) * input_width) * depth;
        for (int filter_x = filter_x_start; filter_x < filter_x_end; ++filter_x) {
            total += row[(long long)(in_x_origin + filter_x) * depth + channel];
            filter_count++;
        }
    }
    output_data[index] = total / filter_count;
}
