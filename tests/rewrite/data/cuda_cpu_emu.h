// Host C++ stand-ins for the CUDA names element-wise kernels use, so that a kernel and its rewrite can be
// compiled with g++ and run thread by thread on the CPU (tests/rewrite/cuda_cpu.py). Vector types have
// CUDA's sizes and 16-byte alignment; __half and __nv_bfloat16 hold their bits and convert through float
// with round-to-nearest-even, as the device intrinsics do.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct perfagent_dim3 { unsigned x, y, z; };
static perfagent_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) longlong2 { long long x, y; };
struct alignas(16) ulonglong2 { unsigned long long x, y; };

static inline unsigned perfagent_float_bits(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline float perfagent_bits_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }

// float -> binary16, round to nearest even (subnormals, overflow to inf, NaN kept quiet).
static inline unsigned short perfagent_f2h(float f) {
    unsigned u = perfagent_float_bits(f);
    unsigned sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0xffu) return (unsigned short)(sign | 0x7c00u | (man ? 0x200u : 0u));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f) return (unsigned short)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (unsigned short)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e), half = man >> shift, rest = man & ((1u << shift) - 1u);
        unsigned mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u))) ++half;
        return (unsigned short)(sign | half);
    }
    unsigned half = ((unsigned)e << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return (unsigned short)(sign | half);
}

static inline float perfagent_h2f(unsigned short h) {
    unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu) return perfagent_bits_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = (float)man * (1.0f / 16777216.0f);  // man * 2^-24
        return sign ? -v : v;
    }
    return perfagent_bits_float(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

static inline unsigned short perfagent_f2bf(float f) {
    unsigned u = perfagent_float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

struct __half {
    unsigned short bits;
    __half() = default;
    __half(float f) : bits(perfagent_f2h(f)) {}
    operator float() const { return perfagent_h2f(bits); }
};
struct __nv_bfloat16 {
    unsigned short bits;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : bits(perfagent_f2bf(f)) {}
    operator float() const { return perfagent_bits_float((unsigned)bits << 16); }
};
struct alignas(4) __half2 { __half x, y; };
struct alignas(4) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline float __half2float(__half h) { return (float)h; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
// round to nearest even, as the device's cvt.rni (the host's default rounding mode)
static inline int __float2int_rn(float f) { return (int)std::nearbyintf(f); }
static inline __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
static inline __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
static inline __half __hfma(__half a, __half b, __half c) { return __half((float)a * (float)b + (float)c); }

// Per-byte unsigned saturating add of two 32-bit words.
static inline unsigned __vaddus4(unsigned a, unsigned b) {
    unsigned r = 0;
    for (int k = 0; k < 4; ++k) {
        unsigned s = ((a >> (8 * k)) & 0xffu) + ((b >> (8 * k)) & 0xffu);
        r |= (s > 0xffu ? 0xffu : s) << (8 * k);
    }
    return r;
}

// Deterministic inputs: element e of buffer k, spread over the type's range (integers wrap, so that
// saturating and overflowing arithmetic is exercised; floating types get small signed values).
template <class T>
static inline T perfagent_fill(long e, int k) {
    if constexpr (std::is_integral_v<T>) {
        return (T)(unsigned long long)(e * 37 + k * 101 + (e * e) % 7);
    } else if constexpr (std::is_same_v<T, __half2> || std::is_same_v<T, __nv_bfloat162>) {
        T v;
        v.x = (float)((e * 14 + k * 3) % 11) - 4.5f;
        v.y = (float)((e * 14 + 7 + k * 3) % 11) - 4.5f;
        return v;
    } else {
        return T((float)((e * 7 + k * 3) % 11) - 4.5f);
    }
}

// Threads one after another: element-wise kernels have no barriers, so any order is a valid schedule.
template <class F>
static void perfagent_launch(unsigned grid, unsigned block, F &&body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            body();
        }
}
