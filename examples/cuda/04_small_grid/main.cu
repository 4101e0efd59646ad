// 04_small_grid: z = a*x + y over 2^25 floats (3 x 128 MiB) with a grid-stride loop launched with
// 32 blocks (small grid) vs. one full wave of blocks sized from the device attributes.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o small_grid examples/cuda/04_small_grid/main.cu
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
    const float a = 1.75f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_x(n), h_y(n);
    for (int i = 0; i < n; ++i) {
        h_x[i] = hash_float((uint32_t)i, 4u, -1.0f, 1.0f);
        h_y[i] = hash_float((uint32_t)i, 5u, -1.0f, 1.0f);
    }
    float *d_x = nullptr, *d_y = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    const int block = 256;
    const int slow_grid = 32;  // the bug: a hard-coded grid far below the SM count
    const int sms = device_attr(cudaDevAttrMultiProcessorCount);
    const int threads_per_sm = device_attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    const int fixed_grid = sms * (threads_per_sm / block);  // one full wave
    std::printf("launch: slow grid %d x %d, fixed grid %d x %d\n", slow_grid, block, fixed_grid, block);

    const double traffic = 3.0 * (double)bytes;
    auto no_reset = [] {};
    time_kernel("saxpy_gridstride_small_grid", traffic, 2.0 * n, no_reset,
                [&] { saxpy_gridstride_small_grid<<<slow_grid, block>>>(d_x, d_y, d_slow, n, a); });
    time_kernel("saxpy_gridstride_full_grid", traffic, 2.0 * n, no_reset,
                [&] { saxpy_gridstride_full_grid<<<fixed_grid, block>>>(d_x, d_y, d_fixed, n, a); });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = a * h_x[i] + h_y[i];
    // The device may contract a*x+y into one FMA: allow a few ulps against the CPU.
    size_t bad = count_mismatches("saxpy_gridstride_small_grid", h_slow.data(), h_ref.data(), n, 1e-6, 1e-6);
    bad += count_mismatches("saxpy_gridstride_full_grid vs small_grid", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
