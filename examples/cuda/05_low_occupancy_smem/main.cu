// 05_low_occupancy_smem: out = a*in + b over 2^25 floats (2 x 128 MiB) with 200 KiB of dynamic
// shared memory per 128-thread block (1 block per SM, 6.25 % occupancy) vs. a right-sized 1 KiB
// static buffer and 256-thread blocks (100 % occupancy).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o low_occupancy examples/cuda/05_low_occupancy_smem/main.cu
// ---------------------------------------------------------------------------------------------
// Harness. Each example carries its own copy so that its folder is self-contained.
// EXAMPLE_REPS=<n> sets the number of timed launches per kernel (default 2, after 1 warm-up
// launch): kept small on purpose because Nsight Compute replays every launch it profiles.
// ---------------------------------------------------------------------------------------------
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                         cudaGetErrorString(err_));                                         \
            std::exit(2);                                                                   \
        }                                                                                   \
    } while (0)

// Deterministic, position-based input values (never all zeros).
inline uint32_t hash_u32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Uniform in [lo, hi), a function of (i, seed) only.
inline float hash_float(uint32_t i, uint32_t seed, float lo, float hi)
{
    const uint32_t h = hash_u32(i * 0x9E3779B9U + seed * 0x85EBCA6BU + 0x165667B1U);
    return lo + (hi - lo) * (float)(h >> 8) * (1.0f / 16777216.0f);
}

inline int timed_reps()
{
    const char *s = std::getenv("EXAMPLE_REPS");
    const int r = s ? std::atoi(s) : 2;
    return r < 1 ? 1 : r;
}

inline int device_attr(cudaDeviceAttr attr)
{
    int dev = 0, value = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, dev));
    return value;
}

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
// the first few.
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

inline int finish(size_t mismatches)
{
    if (mismatches != 0) {
        std::printf("FAIL: %zu mismatches\n", mismatches);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
// ---------------------------------------------------------------------------------------------

#include "slow.cu"
#include "fixed.cu"

int main()
{
    print_device();
    const int n = 1 << 25;
    const float a = 0.75f, b = 0.5f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 6u, -2.0f, 2.0f);
    float *d_in = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    // The bug: 200 KiB of dynamic shared memory per block (sm_90 allows up to 227 KiB per block
    // after opting in), of which 128 * 4 bytes are used. Capped at the device's opt-in limit so
    // that the example still runs (still one block per SM) on GPUs with less shared memory.
    const int slow_block = 128;
    const int slow_smem = std::min(200 * 1024, device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    CUDA_CHECK(cudaFuncSetAttribute(scale_bias_smem_oversized, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    slow_smem));
    const int slow_grid = (n + slow_block - 1) / slow_block;
    const int fixed_block = SCALE_BIAS_BLOCK;
    const int fixed_grid = (n + fixed_block - 1) / fixed_block;

    int slow_blocks_per_sm = 0, fixed_blocks_per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&slow_blocks_per_sm, scale_bias_smem_oversized,
                                                             slow_block, slow_smem));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fixed_blocks_per_sm, scale_bias_smem_rightsized,
                                                             fixed_block, 0));
    std::printf("occupancy: slow %d block(s) x %d threads per SM, fixed %d blocks x %d threads per SM\n",
                slow_blocks_per_sm, slow_block, fixed_blocks_per_sm, fixed_block);

    const double traffic = 2.0 * (double)bytes;
    auto no_reset = [] {};
    time_kernel("scale_bias_smem_oversized", traffic, 2.0 * n, no_reset, [&] {
        scale_bias_smem_oversized<<<slow_grid, slow_block, slow_smem>>>(d_in, d_slow, n, a, b);
    });
    time_kernel("scale_bias_smem_rightsized", traffic, 2.0 * n, no_reset, [&] {
        scale_bias_smem_rightsized<<<fixed_grid, fixed_block>>>(d_in, d_fixed, n, a, b);
    });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = std::fma(a, h_in[i], b);
    size_t bad = count_mismatches("scale_bias_smem_oversized", h_slow.data(), h_ref.data(), n, 0.0, 0.0);
    bad += count_mismatches("scale_bias_smem_rightsized vs oversized", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
