__global__ void gemma_scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
int main() { float* x; cudaMalloc(&x, 1024 * 4); gemma_scale<<<4, 256>>>(x, 2.0f, 1024); return cudaDeviceSynchronize() != cudaSuccess; }
