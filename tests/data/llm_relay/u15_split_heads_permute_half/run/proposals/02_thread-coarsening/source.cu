// unseen2/15_split_heads_permute_half: the multi-head attention "split heads" permute
// x.view(B, S, H, D).permute(0, 2, 1, 3).contiguous() on fp16.
// Thread-coarsened version: each thread owns one 8-element chunk c of the H*D input row (16 bytes,
// copied as one uint4 when D % 8 == 0 and the pointers are 16-byte aligned) for SC = 4 consecutive
// sequence positions. The (b, s-block, h, d) decode is done once per thread (instead of three 64-bit
// div/mod per 2-byte element); moving to the next s only adds H*D to the input offset and D to the
// output offset. The SC loads are issued before the stores. Consecutive threads take consecutive
// chunks of a row, so loads are contiguous and stores are contiguous per head.
// Launch: block 256, grid ceil(B * ceil(S / 4) * ceil(H * D / 8) / 256).
#include <cuda_fp16.h>
#include <stdint.h>

#define SC 4    // sequence positions per thread
#define VEC 8   // halves per chunk

extern "C" __global__ void __launch_bounds__(256) permute_bshd_to_bhsd(const __half *in, __half *out, int B, int S, int H, int D)
{
    const int HD = H * D;
    const int nchunk = (HD + VEC - 1) / VEC;     // chunks per (b, s) row
    const int nsblk = (S + SC - 1) / SC;         // s-blocks per batch
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)B * nsblk * nchunk;
    if (idx >= total) return;

    const long long t = idx / nchunk;
    const int c = (int)(idx - t * nchunk);
    const int sblk = (int)(t % nsblk);
    const int b = (int)(t / nsblk);
    const int s0 = sblk * SC;
    const int nsv = min(SC, S - s0);

    const long long in_row0 = ((long long)b * S + s0) * HD;                  // in[b, s0, 0, 0]
    const long long out_b = (long long)b * H * S * D + (long long)s0 * D;     // out[b, 0, s0, 0]
    const long long SD = (long long)S * D;

    if ((D & 7) == 0 && ((((uintptr_t)in) | ((uintptr_t)out)) & 15) == 0) {
        const int e = c * VEC;
        const int h = e / D;
        const int d = e - h * D;
        const uint4 *src = reinterpret_cast<const uint4 *>(in + in_row0 + e);
        uint4 *dst = reinterpret_cast<uint4 *>(out + out_b + h * SD + d);
        const int src_step = HD / VEC; // uint4 per input row
        const int dst_step = D / VEC;  // uint4 per output row
        if (nsv == SC) {
            uint4 v[SC];
#pragma unroll
            for (int j = 0; j < SC; ++j) v[j] = __ldg(src + j * src_step);
#pragma unroll
            for (int j = 0; j < SC; ++j) dst[j * dst_step] = v[j];
        } else {
            for (int j = 0; j < nsv; ++j) dst[j * dst_step] = __ldg(src + j * src_step);
        }
    } else {
        // generic path: the chunk's (up to 8) elements, one h/d decode per element, reused over s
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const int e = c * VEC + k;
            if (e >= HD) break;
            const int h = e / D;
            const int d = e - h * D;
            const __half *src = in + in_row0 + e;
            __half *dst = out + out_b + h * SD + d;
            for (int j = 0; j < nsv; ++j) dst[(long long)j * D] = src[(long long)j * HD];
        }
    }
}
