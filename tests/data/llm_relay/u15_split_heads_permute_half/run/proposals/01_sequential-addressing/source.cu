// unseen2/15_split_heads_permute_half: the multi-head attention "split heads" permute
// x.view(B, S, H, D).permute(0, 2, 1, 3).contiguous() on fp16.
// Sequentially addressed version: one block per (b, s) input row of H*D contiguous halves. The row's
// (b, s) is peeled once per block; inside the row consecutive threads take consecutive 16-byte chunks
// (8 halves), so both the load and the store are contiguous and the per-element 64-bit div/mod chain
// is gone (one 32-bit divide per 16-byte chunk remains). Scalar fallback when D % 8 != 0 or the
// pointers are not 16-byte aligned.
// Launch: block 128, grid B * S.
#include <cuda_fp16.h>
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(128) permute_bshd_to_bhsd(const __half *in, __half *out, int B, int S, int H, int D)
{
    const long long row = blockIdx.x; // row = b * S + s
    if (row >= (long long)B * S) return;
    const int b = (int)(row / S);
    const int s = (int)(row - (long long)b * S);
    const int HD = H * D;
    const long long SD = (long long)S * D;
    const __half *src = in + row * HD;
    __half *dst = out + (long long)b * H * SD + (long long)s * D;

    if ((D & 7) == 0 && ((((uintptr_t)in) | ((uintptr_t)out)) & 15) == 0) {
        const int Dv = D >> 3;
        const int HDv = HD >> 3;
        const uint4 *src4 = reinterpret_cast<const uint4 *>(src);
        for (int v = threadIdx.x; v < HDv; v += blockDim.x) {
            const int h = v / Dv;
            const int dv = v - h * Dv;
            const uint4 val = __ldg(src4 + v);
            *reinterpret_cast<uint4 *>(dst + h * SD + (dv << 3)) = val;
        }
    } else {
        for (int e = threadIdx.x; e < HD; e += blockDim.x) {
            const int h = e / D;
            const int d = e - h * D;
            dst[h * SD + d] = src[e];
        }
    }
}
