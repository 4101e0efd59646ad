// unseen2/12_embedding_gather_thread_per_token / fixed: one block per token, its threads copying the row
// 8 halves (16 bytes) at a time -- the `embedding_f16x8_pack_kernel` layout of xlite-dev/LeetCUDA
// kernels/embedding -- with an element-wise path when dim % 8 != 0 (rows then are not 16-byte aligned).
// Launch: block 128, grid num_tokens (spec variant).
#include <cuda_fp16.h>

extern "C" __global__ void embedding_lookup_x8(const long long *__restrict__ ids, const __half *__restrict__ table,
                                               __half *__restrict__ out, int num_tokens, int dim)
{
    const int t = blockIdx.x;
    if (t >= num_tokens) return;
    const __half *src = table + ids[t] * dim;
    __half *dst = out + (long long)t * dim;
    if ((dim & 7) == 0) {
        const uint4 *s4 = reinterpret_cast<const uint4 *>(src);
        uint4 *d4 = reinterpret_cast<uint4 *>(dst);
        for (int v = threadIdx.x; v < dim / 8; v += blockDim.x)
            d4[v] = s4[v];
    } else {
        for (int d = threadIdx.x; d < dim; d += blockDim.x)
            dst[d] = src[d];
    }
}
