// unseen2/15_split_heads_permute_half / fixed: the launch carries the coordinates -- grid (s, b),
// block (d-vector, h) -- so no thread divides, and each thread moves 8 halves with one 16-byte load and
// store (a head's D-row is contiguous on both sides; the FasterTransformer / LeetCUDA "pack" style of
// transpose-for-scores kernels). Requires D % 8 == 0 and (D / 8) * H <= 1024, as the spec's shapes are.
// Launch: block (D / 8, H), grid (S, B) (spec variant).
#include <cuda_fp16.h>

extern "C" __global__ void permute_bshd_to_bhsd_x8(const __half *__restrict__ in, __half *__restrict__ out, int B,
                                                   int S, int H, int D)
{
    const int v = threadIdx.x;  // which 8-half vector of the D-row
    const int h = threadIdx.y;
    const int s = blockIdx.x;
    const int b = blockIdx.y;
    const size_t src = (((size_t)b * S + s) * H + h) * D + (size_t)v * 8;
    const size_t dst = (((size_t)b * H + h) * S + s) * D + (size_t)v * 8;
    *reinterpret_cast<uint4 *>(out + dst) = *reinterpret_cast<const uint4 *>(in + src);
}
