// A kernel that spills on sm_90 with nvcc 13: __launch_bounds__(1024, 2) caps it at 32 registers
// (65536 / (1024 * 2)), while 48 accumulators, all live across the mixing rounds, need far more.
__constant__ float weights[64];

__global__ void __launch_bounds__(1024, 2)
spill_heavy(const float* __restrict__ in, float* out, int n, int k) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = in[j * n + threadIdx.x] * weights[j];
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + r + 1) % 48] + in[r * n + j];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * acc[(j * 7 + k) % 48];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
