// 10_sgemm_naive: FP32 SGEMM, M = N = K = 2048 (17.2 GFLOP), C = alpha*A@B + beta*C:
// siboehm kernel 1 (naive, uncoalesced) vs. kernel 3 (coalesced + 32x32 shared-memory tiles).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o sgemm examples/cuda/10_sgemm_naive/main.cu
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
    const int M = 2048, N = 2048, K = 2048;
    const float alpha = 1.0f, beta = 0.5f;
    const size_t a_elems = (size_t)M * K, b_elems = (size_t)K * N, c_elems = (size_t)M * N;

    std::vector<float> h_A(a_elems), h_B(b_elems), h_C0(c_elems);
    for (size_t i = 0; i < a_elems; ++i)
        h_A[i] = hash_float((uint32_t)i, 10u, -1.0f, 1.0f);
    for (size_t i = 0; i < b_elems; ++i)
        h_B[i] = hash_float((uint32_t)i, 11u, -1.0f, 1.0f);
    for (size_t i = 0; i < c_elems; ++i)
        h_C0[i] = hash_float((uint32_t)i, 12u, -1.0f, 1.0f);

    float *d_A = nullptr, *d_B = nullptr, *d_C0 = nullptr, *d_C = nullptr;
    CUDA_CHECK(cudaMalloc(&d_A, a_elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, b_elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C0, c_elems * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C, c_elems * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, h_A.data(), a_elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, h_B.data(), b_elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_C0, h_C0.data(), c_elems * sizeof(float), cudaMemcpyHostToDevice));
    // C is read and written (beta != 0): restore it before every launch (a copy, not a kernel).
    auto reset_c = [&] {
        CUDA_CHECK(cudaMemcpy(d_C, d_C0, c_elems * sizeof(float), cudaMemcpyDeviceToDevice));
    };

    const double flops = 2.0 * M * N * (double)K;
    const double traffic = (double)(a_elems + b_elems + 2 * c_elems) * sizeof(float);
    std::vector<float> h_slow(c_elems), h_fixed(c_elems);

    const dim3 slow_block(32, 32);
    const dim3 slow_grid((M + 31) / 32, (N + 31) / 32);
    time_kernel("sgemm_naive", traffic, flops, reset_c, [&] {
        sgemm_naive<<<slow_grid, slow_block>>>(M, N, K, alpha, d_A, d_B, beta, d_C);
    });
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_C, c_elems * sizeof(float), cudaMemcpyDeviceToHost));

    const dim3 fixed_block(SGEMM_TILE * SGEMM_TILE);
    const dim3 fixed_grid((M + SGEMM_TILE - 1) / SGEMM_TILE, (N + SGEMM_TILE - 1) / SGEMM_TILE);
    time_kernel("sgemm_smem_tiled", traffic, flops, reset_c, [&] {
        sgemm_smem_tiled<<<fixed_grid, fixed_block>>>(M, N, K, alpha, d_A, d_B, beta, d_C);
    });
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_C, c_elems * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference (double) on 512 sampled entries; then fixed vs slow everywhere.
    size_t bad = 0;
    for (uint32_t s = 0; s < 512; ++s) {
        const int r = (int)(hash_u32(s * 2u + 1u) % (uint32_t)M);
        const int c = (int)(hash_u32(s * 2u + 2u) % (uint32_t)N);
        double acc = 0.0;
        for (int k = 0; k < K; ++k)
            acc += (double)h_A[(size_t)r * K + k] * (double)h_B[(size_t)k * N + c];
        const double ref = alpha * acc + beta * (double)h_C0[(size_t)r * N + c];
        bad += count_mismatches("sgemm_naive", &h_slow[(size_t)r * N + c], &ref, 1, 2e-3, 1e-3);
    }
    bad += count_mismatches("sgemm_smem_tiled vs naive", h_fixed.data(), h_slow.data(), c_elems, 1e-4, 1e-4);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C0));
    CUDA_CHECK(cudaFree(d_C));
    return finish(bad);
}
