// 03_reduction_divergent: sum of 2^26 floats (256 MiB). Harris reduction #1 (divergent
// interleaved addressing, one element per thread) vs. sequential addressing + first add during
// load + warp-shuffle tail, one wave of blocks.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o reduction examples/cuda/03_reduction_divergent/main.cu
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
    const int n = 1 << 26;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    double ref = 0.0;
    for (int i = 0; i < n; ++i) {
        h_in[i] = hash_float((uint32_t)i, 3u, 0.0f, 1.0f);
        ref += h_in[i];
    }

    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    auto zero_out = [&] { CUDA_CHECK(cudaMemset(d_out, 0, sizeof(float))); };

    const int slow_grid = (n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;  // one element per thread
    const int fixed_grid = 8 * device_attr(cudaDevAttrMultiProcessorCount);  // one full wave
    float slow_sum = 0.0f, fixed_sum = 0.0f;

    time_kernel("reduce_interleaved_divergent", (double)bytes, (double)n, zero_out,
                [&] { reduce_interleaved_divergent<<<slow_grid, REDUCE_BLOCK>>>(d_in, d_out, n); });
    CUDA_CHECK(cudaMemcpy(&slow_sum, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    time_kernel("reduce_sequential_shfl", (double)bytes, (double)n, zero_out,
                [&] { reduce_sequential_shfl<<<fixed_grid, REDUCE_BLOCK>>>(d_in, d_out, n); });
    CUDA_CHECK(cudaMemcpy(&fixed_sum, d_out, sizeof(float), cudaMemcpyDeviceToHost));

    std::printf("sum: reference %.6e, slow %.6e, fixed %.6e\n", ref, (double)slow_sum, (double)fixed_sum);
    // Float atomics make the summation order (hence the last bits) launch-dependent.
    size_t bad = count_mismatches("reduce_interleaved_divergent", &slow_sum, &ref, 1, 0.0, 2e-4);
    bad += count_mismatches("reduce_sequential_shfl", &fixed_sum, &ref, 1, 0.0, 2e-4);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return finish(bad);
}
