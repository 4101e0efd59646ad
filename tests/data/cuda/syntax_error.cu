// Deliberately broken: a missing semicolon. The static profiler must report nvcc's error.
__global__ void broken(float* a) {
  a[threadIdx.x] = 1.0f
}
