// unseen3/05_conv_columns_separable_naive / slow: the column pass of a separable 2-D convolution in the form of
// NVIDIA/cuda-samples convolutionSeparable's CPU reference (Samples/2_Concepts_and_Techniques/
// convolutionSeparable, convolutionSeparable_gold.cpp convolutionColumnCPU; BSD-3) as one GPU thread per
// pixel: 2R + 1 = 17 taps down the column read from global memory, zero outside the image, the filter in a
// global array. Every input is fetched 17 times through L1/L2.
#define KERNEL_RADIUS 8

extern "C" __global__ void convolution_column_naive(float *d_Dst, const float *d_Src, const float *d_Kernel,
                                                    int imageW, int imageH)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= imageW || y >= imageH) return;
    float sum = 0;
    for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++) {
        int d = y + k;
        if (d >= 0 && d < imageH) sum += d_Src[d * imageW + x] * d_Kernel[KERNEL_RADIUS - k];
    }
    d_Dst[y * imageW + x] = sum;
}
