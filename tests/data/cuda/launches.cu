// Launch configurations the static profiler must resolve from the source.
#define BLOCK 128

constexpr int HEAVY_THREADS = 256;

__global__ void scale2d(float* a, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  a[y * width + x] *= 2.0f;
}

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void reverse_block(T* data) {
  extern __shared__ unsigned char raw[];
  T* buf = reinterpret_cast<T*>(raw);
  buf[threadIdx.x] = data[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  data[blockIdx.x * blockDim.x + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

// 96 accumulators live at once: far more than 64 registers per thread, no launch bounds.
__global__ void register_heavy(const float* __restrict__ in, float* out, int n) {
  float acc[96];
#pragma unroll
  for (int j = 0; j < 96; ++j) acc[j] = in[j * n + threadIdx.x];
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int j = 0; j < 96; ++j) acc[j] = fmaf(acc[j], acc[(j + r + 1) % 96], 1.0f);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 96; ++j) s += acc[j] * acc[95 - j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void never_launched(float* a) { a[threadIdx.x] = 0.f; }

__global__ void runtime_block(float* a) { a[threadIdx.x] += 1.f; }

void run(float* a, float* b, float* c, int n, int width, int height, int threads) {
  dim3 grid(width / 32, height / 8);
  scale2d<<<grid, dim3(32, 8)>>>(a, width);
  add<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, b, c, n);
  reverse_block<float><<<n / BLOCK, BLOCK, BLOCK * sizeof(float)>>>(a);
  register_heavy<<<n / HEAVY_THREADS, HEAVY_THREADS>>>(a, c, n);
  runtime_block<<<1, threads>>>(a);
}
