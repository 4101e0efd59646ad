// Recorded-output source: a kernel calling a non-inlined device function, a template kernel
// in a namespace, and a kernel using constant memory.
__constant__ float coeff[32];
__device__ __noinline__ float helper(const float* p, int i) {
  float t[16];
  for (int j = 0; j < 16; ++j) t[j] = p[j + i];
  return t[i & 15];
}
__global__ void uses_helper(float* a) {
  __shared__ int x[32];
  x[threadIdx.x % 32] = 1;
  a[threadIdx.x] = helper(a, threadIdx.x) + x[3] * coeff[threadIdx.x % 32];
}
namespace ns {
template <int N> __global__ void fill(int* p) { p[N] = N; }
}
template __global__ void ns::fill<3>(int*);
