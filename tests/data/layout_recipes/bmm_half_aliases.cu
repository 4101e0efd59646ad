// Own slow form for the batched matmul nests (smem-tiling / register-tiling through _matmul_batch):
// Y[b] = X[b] * W[b] in fp16 with fp32 accumulation, one thread per element, batch from blockIdx.z,
// the operands reached through per-batch aliases.
#include <cuda_fp16.h>

extern "C" __global__ void bmm_f16(int M, int N, int K, const __half *X, const __half *W, __half *Y)
{
    const int item = blockIdx.z;
    const int c = threadIdx.x + blockIdx.x * blockDim.x;
    const int r = threadIdx.y + blockIdx.y * blockDim.y;
    const __half *x = X + (size_t)item * M * K;
    const __half *w = W + (size_t)item * K * N;
    if (r >= M || c >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += __half2float(x[r * K + k]) * __half2float(w[k * N + c]);
    Y[r * N + c + (size_t)item * M * N] = __float2half(acc);
}
