// A complete program: kernels and their launches in one file (literal block sizes, a constexpr
// block constant, a dim3 block, __launch_bounds__, an in-place (aliasing) launch).
#include <cuda_runtime.h>
#include <cstdio>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void __launch_bounds__(512) scale(float *out, const float *in, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = s * in[i];
}

__global__ void axpby(float *out, float *x, float *y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + b * y[i];
}

constexpr int THREADS = 128;

int main()
{
    const int n = 1 << 20;
    float *x = nullptr, *y = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    const dim3 block(THREADS);
    const dim3 grid((n + THREADS - 1) / THREADS);
    scale<<<grid, block>>>(y, x, 0.5f, n);
    axpby<<<(n + 255) / 256, 256>>>(x, x, y, 1.0f, 2.0f, n);  // in place: out aliases x
    cudaDeviceSynchronize();
    std::printf("done\n");
    cudaFree(x);
    cudaFree(y);
    return 0;
}
