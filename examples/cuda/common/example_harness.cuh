// example_harness.cuh: the host-side harness shared by every examples/cuda/*/main.cu.
//
// Each main.cu includes this header as "../common/example_harness.cuh" (resolved relative to
// main.cu, so `nvcc .../main.cu` and `perfagent diagnose .../main.cu` need no -I flag), then its
// own slow.cu / fixed.cu, then defines main(). Only host code lives here: the kernels stay in
// slow.cu / fixed.cu (NVRTC-compilable on their own) and the launches stay in each main.cu, so
// the kernels and launch sequence that the recorded ncu reports in examples/reports/ came from
// do not depend on this file.
//
// EXAMPLE_REPS=<n> sets the number of timed launches per kernel (default 2, after 1 warm-up
// launch): kept small on purpose because Nsight Compute replays every launch it profiles.
#ifndef PERFAGENT_EXAMPLE_HARNESS_CUH
#define PERFAGENT_EXAMPLE_HARNESS_CUH

// The standard headers below are also the ones the main.cu programs use (std::vector, std::min,
// std::fabs, printf, ...): including this header is all a main.cu needs besides its kernels.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Every CUDA runtime call is checked: an unchecked failure (bad launch configuration, out of
// memory, a kernel fault surfacing at the next sync) would otherwise turn into wrong numbers or a
// misleading PASS. Exit status 2 on a CUDA error, distinct from 1 (results mismatch, see finish()).
#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                         cudaGetErrorString(err_));                                         \
            std::exit(2);                                                                   \
        }                                                                                   \
    } while (0)

// Deterministic, position-based input values (never all zeros): every run, and every profiler
// replay, sees the same data, so results and recorded reports are reproducible without a random
// generator's state. A 32-bit integer finaliser (lowbias32) mixes all input bits into the output.
inline uint32_t hash_u32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Uniform in [lo, hi), a function of (i, seed) only, so that a CPU reference can recompute any
// element. The top 24 bits of the hash, scaled by 2^-24, are exactly representable floats.
inline float hash_float(uint32_t i, uint32_t seed, float lo, float hi)
{
    const uint32_t h = hash_u32(i * 0x9E3779B9U + seed * 0x85EBCA6BU + 0x165667B1U);
    return lo + (hi - lo) * (float)(h >> 8) * (1.0f / 16777216.0f);
}

// Timed launches per kernel: EXAMPLE_REPS from the environment, default 2, at least 1. The small
// default keeps profiling cheap (ncu replays each launch many times); scripts/run_examples.sh
// sets a larger value for plain timing runs.
inline int timed_reps()
{
    const char *s = std::getenv("EXAMPLE_REPS");
    const int r = s ? std::atoi(s) : 2;
    return r < 1 ? 1 : r;
}

// One attribute of the current device (e.g. cudaDevAttrMultiProcessorCount), for examples whose
// launch configuration is sized from the hardware (one full wave of blocks).
inline int device_attr(cudaDeviceAttr attr)
{
    int dev = 0, value = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, dev));
    return value;
}

// First output line, "device: NAME, N SMs, cc X.Y": tells which GPU the timings below came from.
inline void print_device()
{
    int dev = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    std::printf("device: %s, %d SMs, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.major,
                prop.minor);
}

// One warm-up launch, then timed_reps() timed launches; `reset` runs before each launch, outside
// the timed region. Prints "name: X.XXX ms, Y GB/s[, Z GFLOP/s]" with the best time; `bytes` is
// the kernel's minimal (algorithmic) DRAM traffic, `flops` 0 when not meaningful.
// The warm-up absorbs lazy module loading and first-touch costs; cudaEvents time the GPU side
// only; the best (not mean) time is the least noisy estimate of what the kernel can do. The
// launch count (1 + reps per kernel) is what the profiler sees, so keep it unchanged.
template <class Reset, class Launch>
float time_kernel(const char *name, double bytes, double flops, Reset reset, Launch launch)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    reset();
    launch();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    float best = 1e30f;
    const int reps = timed_reps();
    for (int r = 0; r < reps; ++r) {
        reset();
        CUDA_CHECK(cudaEventRecord(start));
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        best = std::min(best, ms);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::printf("%s: %.3f ms, %.1f GB/s", name, best, bytes / (best * 1e-3) / 1e9);
    if (flops > 0.0)
        std::printf(", %.1f GFLOP/s", flops / (best * 1e-3) / 1e9);
    std::printf("\n");
    return best;
}

// Counts elements with |got - ref| > atol + rtol * |ref| (NaN counts as a mismatch) and prints
// the first few. Used both against a CPU reference and fixed-vs-slow; atol = rtol = 0 means an
// exact comparison. Written as !(x <= tol) so that a NaN (e.g. an output never written, from a
// 0xFF memset) is a mismatch.
template <class T, class U>
size_t count_mismatches(const char *what, const T *got, const U *ref, size_t n, double atol,
                        double rtol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const double g = (double)got[i], r = (double)ref[i];
        if (!(std::fabs(g - r) <= atol + rtol * std::fabs(r))) {
            if (bad < 5)
                std::fprintf(stderr, "%s: mismatch at %zu: got %.9g, expected %.9g\n", what, i, g, r);
            ++bad;
        }
    }
    return bad;
}

// Last output line and exit status: "PASS" and 0, or "FAIL: N mismatches" and 1. Scripts
// (run_examples.sh) look for the PASS line; `return finish(bad);` ends every main().
inline int finish(size_t mismatches)
{
    if (mismatches != 0) {
        std::printf("FAIL: %zu mismatches\n", mismatches);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}

#endif  // PERFAGENT_EXAMPLE_HARNESS_CUH
