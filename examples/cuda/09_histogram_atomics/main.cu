// 09_histogram_atomics: 256-bin histogram of 2^25 skewed ints (128 MiB; 7/8 of the values in 8 hot
// bins, one per 128-byte line) with global atomics vs. a shared-memory privatized histogram.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o histogram examples/cuda/09_histogram_atomics/main.cu
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
    const size_t bytes = (size_t)n * sizeof(int);

    std::vector<int> h_data(n), h_ref(HIST_BINS, 0);
    for (int i = 0; i < n; ++i) {
        const uint32_t h = hash_u32((uint32_t)i * 0x9E3779B9U + 0x2545F491U);
        // 7 in 8: one of 8 hot bins (5, 37, 69, ..., 229); otherwise uniform over all 256 bins.
        const int v = (h & 7u) != 0u ? (int)(((h >> 3) & 7u) * 32u + 5u) : (int)((h >> 8) & 255u);
        h_data[i] = v;
        ++h_ref[v];
    }
    int *d_data = nullptr, *d_bins = nullptr;
    CUDA_CHECK(cudaMalloc(&d_data, bytes));
    CUDA_CHECK(cudaMalloc(&d_bins, HIST_BINS * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_data, h_data.data(), bytes, cudaMemcpyHostToDevice));
    auto zero_bins = [&] { CUDA_CHECK(cudaMemset(d_bins, 0, HIST_BINS * sizeof(int))); };

    const int block = 256;
    const int grid = device_attr(cudaDevAttrMultiProcessorCount) *
                     (device_attr(cudaDevAttrMaxThreadsPerMultiProcessor) / block);
    std::vector<int> h_slow(HIST_BINS), h_fixed(HIST_BINS);

    time_kernel("histogram_global_atomics", (double)bytes, 0.0, zero_bins,
                [&] { histogram_global_atomics<<<grid, block>>>(d_data, d_bins, n); });
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_bins, HIST_BINS * sizeof(int), cudaMemcpyDeviceToHost));
    time_kernel("histogram_smem_privatized", (double)bytes, 0.0, zero_bins,
                [&] { histogram_smem_privatized<<<grid, block>>>(d_data, d_bins, n); });
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_bins, HIST_BINS * sizeof(int), cudaMemcpyDeviceToHost));

    size_t bad = count_mismatches("histogram_global_atomics", h_slow.data(), h_ref.data(), HIST_BINS, 0.0, 0.0);
    bad += count_mismatches("histogram_smem_privatized", h_fixed.data(), h_ref.data(), HIST_BINS, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_data));
    CUDA_CHECK(cudaFree(d_bins));
    return finish(bad);
}
