// unseen2/15_split_heads_permute_half / slow: the multi-head attention "split heads" permute
// x.view(B, S, H, D).permute(0, 2, 1, 3).contiguous() on fp16, written as a generic strided element-wise
// kernel (PyTorch's TensorIterator / OffsetCalculator form): one 2-byte element per thread, the flat
// 64-bit input index peeled into (b, s, h, d) with three `/` and `%`, re-flattened for the output.
// Launch: block 256, grid ceil(B * S * H * D / 256).
#include <cuda_fp16.h>

extern "C" __global__ void permute_bshd_to_bhsd(const __half *in, __half *out, int B, int S, int H, int D)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)B * S * H * D;
    if (idx >= total) return;
    long long d = idx % D;
    long long t = idx / D;
    long long h = t % H;
    t /= H;
    long long s = t % S;
    long long b = t / S;
    out[((b * H + h) * S + s) * D + d] = in[idx];
}
