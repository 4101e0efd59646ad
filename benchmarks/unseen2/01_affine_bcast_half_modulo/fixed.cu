// unseen2/01_affine_bcast_half_modulo / fixed: a 2-D launch, the row from blockIdx.y (no division), and
// 8 halves per thread through one 16-byte load and store when the row is 16-byte aligned (C % 8 == 0);
// a scalar path covers ragged C and the row tail. Same fp32 arithmetic per element as the slow form.
// Launch: block 128, grid (ceil(C / (8 * 128)), rows)  (spec: [variants."fixed.cu"]).
#include <cuda_fp16.h>

#define VEC 8

extern "C" __global__ void affine_bcast_half_vec(const __half *__restrict__ x, const float *__restrict__ scale,
                                                 const float *__restrict__ shift, __half *__restrict__ y,
                                                 long long rows, long long C)
{
    const long long r = blockIdx.y;
    const long long c0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (r >= rows || c0 >= C) return;
    const __half *xr = x + r * C;
    __half *yr = y + r * C;
    if ((C % VEC) == 0) {  // c0 + VEC <= C holds too: c0 is a multiple of VEC below C
        uint4 packed = *reinterpret_cast<const uint4 *>(xr + c0);
        __half *h = reinterpret_cast<__half *>(&packed);
#pragma unroll
        for (int k = 0; k < VEC; ++k)
            h[k] = __float2half(__half2float(h[k]) * scale[c0 + k] + shift[c0 + k]);
        *reinterpret_cast<uint4 *>(yr + c0) = packed;
    } else {
        const long long end = c0 + VEC < C ? c0 + VEC : C;
        for (long long c = c0; c < end; ++c)
            yr[c] = __float2half(__half2float(xr[c]) * scale[c] + shift[c]);
    }
}
