// 01_transpose_lds_conflicts: LDS-tiled transpose with tile[32][32] (32-way LDS bank conflicts on the
// column read) vs. tile[32][33]. 8192 x 8192 floats (256 MiB per matrix, beyond the 256 MB Infinity Cache).
// Build: hipcc -O3 -o transpose examples/hip/01_transpose_lds_conflicts/main.hip
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
    const int width = 8192, height = 8192;  // idata: height x width, odata: width x height
    const size_t n = (size_t)width * height;
    const size_t bytes = n * sizeof(float);

    std::vector<float> h_in(n);
    for (size_t i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 1u, -1.0f, 1.0f);

    float *d_in = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    HIP_CHECK(hipMalloc(&d_in, bytes));
    HIP_CHECK(hipMalloc(&d_slow, bytes));
    HIP_CHECK(hipMalloc(&d_fixed, bytes));
    HIP_CHECK(hipMemcpy(d_in, h_in.data(), bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(d_slow, 0xFF, bytes));  // NaN: an element never written is caught
    HIP_CHECK(hipMemset(d_fixed, 0xFF, bytes));

    const dim3 block(TILE_DIM, BLOCK_ROWS);
    const dim3 grid((width + TILE_DIM - 1) / TILE_DIM, (height + TILE_DIM - 1) / TILE_DIM);
    const double traffic = 2.0 * (double)bytes;  // read once + write once
    auto no_reset = [] {};

    time_kernel("transpose_lds_conflicts", traffic, no_reset,
                [&] { transpose_lds_conflicts<<<grid, block>>>(d_slow, d_in, width, height); });
    time_kernel("transpose_lds_padded", traffic, no_reset,
                [&] { transpose_lds_padded<<<grid, block>>>(d_fixed, d_in, width, height); });

    std::vector<float> h_slow(n), h_fixed(n);
    HIP_CHECK(hipMemcpy(h_slow.data(), d_slow, bytes, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(h_fixed.data(), d_fixed, bytes, hipMemcpyDeviceToHost));

    // CPU reference on every 16th output row (exact), then fixed == slow everywhere (exact).
    size_t bad = 0;
    for (int r = 0; r < width && bad < 5; r += 16) {  // output row r = input column r
        for (int c = 0; c < height; ++c) {
            const float ref = h_in[(size_t)c * width + r];
            if (!(h_slow[(size_t)r * height + c] == ref)) {
                std::fprintf(stderr, "transpose_lds_conflicts: wrong at (%d,%d)\n", r, c);
                ++bad;
                break;
            }
        }
    }
    bad += count_mismatches("transpose_lds_padded vs conflicts", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    HIP_CHECK(hipFree(d_in));
    HIP_CHECK(hipFree(d_slow));
    HIP_CHECK(hipFree(d_fixed));
    return finish(bad);
}
