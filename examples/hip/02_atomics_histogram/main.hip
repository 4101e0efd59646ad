// 02_atomics_histogram: 256-bin histogram of 2^25 skewed ints (128 MiB; 7/8 of the values in 8 hot bins,
// one per 128-byte line) with global atomics vs. an LDS-privatised histogram.
// Build: hipcc -O3 -o histogram examples/hip/02_atomics_histogram/main.hip
// ---------------------------------------------------------------------------------------------
// Harness. Each example carries its own copy so that its folder is self-contained. It keeps to the
// CUDA-compatible subset of HIP (hipMalloc/hipMemcpy/hipEvent*, <<<>>> launches), so it also compiles
// with nvcc through examples/hip/cuda_shim (a syntax check; the numbers only mean something on AMD).
// EXAMPLE_REPS=<n> sets the number of timed launches per kernel (default 2, after 1 warm-up launch):
// kept small because rocprofv3 replays the application once per counter pass.
// ---------------------------------------------------------------------------------------------
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define HIP_CHECK(call)                                                                     \
    do {                                                                                    \
        hipError_t err_ = (call);                                                           \
        if (err_ != hipSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                         hipGetErrorString(err_));                                          \
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

inline int multiprocessor_count()
{
    int dev = 0, value = 0;
    HIP_CHECK(hipGetDevice(&dev));
    HIP_CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeMultiprocessorCount, dev));
    return value;
}

inline void print_device()
{
    int dev = 0;
    hipDeviceProp_t prop;
    HIP_CHECK(hipGetDevice(&dev));
    HIP_CHECK(hipGetDeviceProperties(&prop, dev));
#ifdef __HIP_PLATFORM_AMD__
    std::printf("device: %s (%s), %d CUs, wavefront %d\n", prop.name, prop.gcnArchName,
                prop.multiProcessorCount, prop.warpSize);
#else
    std::printf("device: %s, %d SMs, warp %d\n", prop.name, prop.multiProcessorCount, prop.warpSize);
#endif
}

// One warm-up launch, then timed_reps() timed launches; `reset` runs before each launch, outside the
// timed region. Prints "name: X.XXX ms, Y GB/s" with the best time; `bytes` is the kernel's minimal
// (algorithmic) HBM traffic.
template <class Reset, class Launch>
float time_kernel(const char *name, double bytes, Reset reset, Launch launch)
{
    hipEvent_t start, stop;
    HIP_CHECK(hipEventCreate(&start));
    HIP_CHECK(hipEventCreate(&stop));
    reset();
    launch();
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    float best = 1e30f;
    const int reps = timed_reps();
    for (int r = 0; r < reps; ++r) {
        reset();
        HIP_CHECK(hipEventRecord(start, 0));
        launch();
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipEventRecord(stop, 0));
        HIP_CHECK(hipEventSynchronize(stop));
        float ms = 0.0f;
        HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
        best = std::min(best, ms);
    }
    HIP_CHECK(hipEventDestroy(start));
    HIP_CHECK(hipEventDestroy(stop));
    std::printf("%s: %.3f ms, %.1f GB/s\n", name, best, bytes / (best * 1e-3) / 1e9);
    return best;
}

// Counts elements with |got - ref| > atol + rtol * |ref| (NaN counts as a mismatch), prints the first few.
template <class T, class U>
size_t count_mismatches(const char *what, const T *got, const U *ref, size_t n, double atol, double rtol)
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

#include "slow.hip"
#include "fixed.hip"

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
    HIP_CHECK(hipMalloc(&d_data, bytes));
    HIP_CHECK(hipMalloc(&d_bins, HIST_BINS * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_data, h_data.data(), bytes, hipMemcpyHostToDevice));
    auto zero_bins = [&] { HIP_CHECK(hipMemset(d_bins, 0, HIST_BINS * sizeof(int))); };

    const int block = 256;
    const int grid = multiprocessor_count() * 8;  // 8 workgroups of 4 wave64 per CU: 32 waves
    std::vector<int> h_slow(HIST_BINS), h_fixed(HIST_BINS);

    time_kernel("histogram_global_atomics", (double)bytes, zero_bins,
                [&] { histogram_global_atomics<<<grid, block>>>(d_data, d_bins, n); });
    HIP_CHECK(hipMemcpy(h_slow.data(), d_bins, HIST_BINS * sizeof(int), hipMemcpyDeviceToHost));
    time_kernel("histogram_lds_privatized", (double)bytes, zero_bins,
                [&] { histogram_lds_privatized<<<grid, block>>>(d_data, d_bins, n); });
    HIP_CHECK(hipMemcpy(h_fixed.data(), d_bins, HIST_BINS * sizeof(int), hipMemcpyDeviceToHost));

    size_t bad = count_mismatches("histogram_global_atomics", h_slow.data(), h_ref.data(), HIST_BINS, 0.0, 0.0);
    bad += count_mismatches("histogram_lds_privatized", h_fixed.data(), h_ref.data(), HIST_BINS, 0.0, 0.0);

    HIP_CHECK(hipFree(d_data));
    HIP_CHECK(hipFree(d_bins));
    return finish(bad);
}
