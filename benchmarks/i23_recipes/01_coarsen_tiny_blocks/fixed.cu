// Grid-stride loop over 256-thread blocks, one wave of resident blocks (the spec's variant launch).
extern "C" __global__ void gelu_grid_stride(const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v)));
    }
}
