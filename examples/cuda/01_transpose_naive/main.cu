// 01_transpose_naive: naive transpose (strided, uncoalesced stores) vs. 32x32 shared-memory tile
// with +1 padding. 8192 x 8192 floats (256 MiB per matrix, well beyond the 50 MB L2).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o transpose examples/cuda/01_transpose_naive/main.cu
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
    const int width = 8192, height = 8192;  // idata: height x width, odata: width x height
    const size_t n = (size_t)width * height;
    const size_t bytes = n * sizeof(float);

    std::vector<float> h_in(n);
    for (size_t i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 1u, -1.0f, 1.0f);

    float *d_in = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));  // NaN: an element never written is caught
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    const dim3 block(TILE_DIM, BLOCK_ROWS);
    const dim3 grid((width + TILE_DIM - 1) / TILE_DIM, (height + TILE_DIM - 1) / TILE_DIM);
    const double traffic = 2.0 * (double)bytes;  // read once + write once
    auto no_reset = [] {};

    time_kernel("transpose_naive", traffic, 0.0, no_reset,
                [&] { transpose_naive<<<grid, block>>>(d_slow, d_in, width, height); });
    time_kernel("transpose_tiled_padded", traffic, 0.0, no_reset,
                [&] { transpose_tiled_padded<<<grid, block>>>(d_fixed, d_in, width, height); });

    std::vector<float> h_slow(n), h_fixed(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));

    // CPU reference on every 16th output row (exact), then fixed == slow everywhere (exact).
    size_t bad = 0;
    for (int r = 0; r < width && bad < 5; r += 16) {  // output row r = input column r
        for (int c = 0; c < height; ++c) {
            const float ref = h_in[(size_t)c * width + r];
            if (!(h_slow[(size_t)r * height + c] == ref)) {
                std::fprintf(stderr, "transpose_naive: wrong at (%d,%d)\n", r, c);
                ++bad;
                break;
            }
        }
    }
    bad += count_mismatches("transpose_tiled_padded vs naive", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
