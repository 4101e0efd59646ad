// unseen3/05_conv_columns_separable_naive / fix: cuda-samples convolutionColumnsKernel (convolutionSeparable.cu,
// BSD-3): a (32, 8) block computes a 32-column x 64-row strip; the strip and its KERNEL_RADIUS-row halos
// are staged once in shared memory (zeros outside the image, a column of padding against bank conflicts),
// the filter in shared memory too (a spec cannot fill __constant__). Same tap order as the original.
// Launch: block (32, 8), grid (ceil(W / 32), ceil(H / 64)).
#define KERNEL_RADIUS 8
#define COLS 32
#define ROWS 8
#define STEPS 8

extern "C" __global__ void convolution_columns_tiled(float *__restrict__ d_Dst, const float *__restrict__ d_Src,
                                                     const float *__restrict__ d_Kernel, int imageW, int imageH)
{
    __shared__ float s_Data[ROWS * STEPS + 2 * KERNEL_RADIUS][COLS + 1];
    __shared__ float s_Kernel[2 * KERNEL_RADIUS + 1];
    int x = blockIdx.x * COLS + threadIdx.x;
    int y0 = blockIdx.y * ROWS * STEPS - KERNEL_RADIUS;
    int tid = threadIdx.y * COLS + threadIdx.x;
    if (tid < 2 * KERNEL_RADIUS + 1) s_Kernel[tid] = d_Kernel[tid];
    for (int r = threadIdx.y; r < ROWS * STEPS + 2 * KERNEL_RADIUS; r += ROWS) {
        int y = y0 + r;
        s_Data[r][threadIdx.x] = (x < imageW && y >= 0 && y < imageH) ? d_Src[y * imageW + x] : 0.0f;
    }
    __syncthreads();
    if (x >= imageW) return;
    for (int step = 0; step < STEPS; step++) {
        int r = KERNEL_RADIUS + step * ROWS + threadIdx.y;
        int y = y0 + r;
        if (y >= imageH) break;
        float sum = 0;
        for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++) sum += s_Data[r + k][threadIdx.x] * s_Kernel[KERNEL_RADIUS - k];
        d_Dst[y * imageW + x] = sum;
    }
}
