// unseen2/12_embedding_gather_thread_per_token / slow: embedding lookup (out[t, :] = table[ids[t], :]) over
// an fp16 table with int64 token ids, one thread per token copying its row element by element. Lanes of
// a warp walk different rows, dim * 2 bytes apart: every 2-byte access is its own sector, and only
// num_tokens threads exist. Launch: block 256, grid ceil(num_tokens / 256).
#include <cuda_fp16.h>

extern "C" __global__ void embedding_lookup(const long long *ids, const __half *table, __half *out,
                                            int num_tokens, int dim)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_tokens) return;
    const __half *src = table + ids[t] * dim;
    __half *dst = out + (long long)t * dim;
    for (int d = 0; d < dim; ++d)
        dst[d] = src[d];
}
