// A complete program with main(): build_program compiles it into an executable.
#include <cstdio>

__global__ void fill(float* a, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

int main() {
  const int n = 1 << 20;
  float* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
    std::printf("no GPU\n");
    return 0;
  }
  fill<<<(n + 255) / 256, 256>>>(d, 1.0f, n);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
