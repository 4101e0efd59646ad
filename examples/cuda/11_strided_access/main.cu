// 11_strided_access: x + vx*dt for 2^24 particles of 8 floats (512 MiB): array-of-structures
// (stride-8 loads, 1/4 of each fetched sector used) vs. structure-of-arrays (contiguous loads).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o strided examples/cuda/11_strided_access/main.cu
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
    const int n = 1 << 24;
    const float dt = 0.01f;
    const size_t elems = (size_t)n * PARTICLE_FIELDS;
    const size_t bytes = elems * sizeof(float);
    const size_t out_bytes = (size_t)n * sizeof(float);

    float *d_aos = nullptr, *d_soa = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_aos, bytes));
    CUDA_CHECK(cudaMalloc(&d_soa, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, out_bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, out_bytes));

    // Same values in both layouts: field f of particle i = hash(i * F + f). Built and uploaded in
    // chunks of particles to keep host memory and time small; x and vx are kept for the reference.
    std::vector<float> h_x(n), h_vx(n);
    {
        const int chunk = 1 << 20;
        std::vector<float> aos((size_t)chunk * PARTICLE_FIELDS), soa((size_t)chunk * PARTICLE_FIELDS);
        for (int c0 = 0; c0 < n; c0 += chunk) {
            const int m = std::min(chunk, n - c0);
            for (int p = 0; p < m; ++p) {
                for (int f = 0; f < PARTICLE_FIELDS; ++f) {
                    const size_t i = (size_t)c0 + p;
                    const float v = hash_float((uint32_t)(i * PARTICLE_FIELDS + f), 13u, -10.0f, 10.0f);
                    aos[(size_t)p * PARTICLE_FIELDS + f] = v;
                    soa[(size_t)f * m + p] = v;
                }
                h_x[(size_t)c0 + p] = aos[(size_t)p * PARTICLE_FIELDS + 0];
                h_vx[(size_t)c0 + p] = aos[(size_t)p * PARTICLE_FIELDS + 3];
            }
            CUDA_CHECK(cudaMemcpy(d_aos + (size_t)c0 * PARTICLE_FIELDS, aos.data(),
                                  (size_t)m * PARTICLE_FIELDS * sizeof(float), cudaMemcpyHostToDevice));
            for (int f = 0; f < PARTICLE_FIELDS; ++f)
                CUDA_CHECK(cudaMemcpy(d_soa + (size_t)f * n + c0, soa.data() + (size_t)f * m, (size_t)m * sizeof(float),
                                      cudaMemcpyHostToDevice));
        }
    }
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, out_bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, out_bytes));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    const double useful = 3.0 * (double)out_bytes;  // x and vx read, out written
    auto no_reset = [] {};
    time_kernel("particles_advance_aos", useful, 2.0 * n, no_reset,
                [&] { particles_advance_aos<<<grid, block>>>(d_aos, d_slow, n, dt); });
    time_kernel("particles_advance_soa", useful, 2.0 * n, no_reset,
                [&] { particles_advance_soa<<<grid, block>>>(d_soa, d_fixed, n, dt); });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, out_bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = h_x[i] + h_vx[i] * dt;
    // The device may contract x + vx*dt into one FMA: allow a few ulps against the CPU.
    size_t bad = count_mismatches("particles_advance_aos", h_slow.data(), h_ref.data(), n, 1e-6, 1e-6);
    bad += count_mismatches("particles_advance_soa vs aos", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_aos));
    CUDA_CHECK(cudaFree(d_soa));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
