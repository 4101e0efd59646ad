// 06_register_spills: 2^22 threads, each smoothing a 48-value register ring 32 times.
// __launch_bounds__(256, 8) (32-register cap, spills) vs. __launch_bounds__(256) (64 registers,
// no spills).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o spills examples/cuda/06_register_spills/main.cu
//        (add -Xptxas -v to see the spill counts)

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"
#include "fixed.cu"

// CPU model of one thread (std::fma where the kernel calls fmaf; the initial x*(k+1) + c may be
// contracted on the device, hence the tolerance below).
static float smooth_ring_cpu(float x, int iters)
{
    float v[SMOOTH_LEN];
    for (int k = 0; k < SMOOTH_LEN; ++k)
        v[k] = x * (float)(k + 1) + (float)k * 0.001f;
    for (int it = 0; it < iters; ++it) {
        const float first = v[0];
        for (int k = 0; k < SMOOTH_LEN - 1; ++k)
            v[k] = std::fma(v[k + 1] - v[k], 0.25f, v[k]);
        v[SMOOTH_LEN - 1] = std::fma(first - v[SMOOTH_LEN - 1], 0.25f, v[SMOOTH_LEN - 1]);
    }
    float acc = 0.0f;
    for (int k = 0; k < SMOOTH_LEN; ++k)
        acc = std::fma(v[k], (float)((k & 7) + 1), acc);
    return acc;
}

int main()
{
    print_device();
    const int n = 1 << 22;
    const int iters = 32;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 7u, -1.0f, 1.0f);
    float *d_in = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    // Per thread and iteration: SMOOTH_LEN subtractions + SMOOTH_LEN FMAs = 3 * SMOOTH_LEN flops.
    const double flops = (double)n * iters * 3.0 * SMOOTH_LEN;
    auto no_reset = [] {};
    time_kernel("smooth_ring_spill", 2.0 * (double)bytes, flops, no_reset,
                [&] { smooth_ring_spill<<<grid, block>>>(d_in, d_slow, n, iters); });
    time_kernel("smooth_ring_nospill", 2.0 * (double)bytes, flops, no_reset,
                [&] { smooth_ring_nospill<<<grid, block>>>(d_in, d_fixed, n, iters); });

    std::vector<float> h_slow(n), h_fixed(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));

    size_t bad = 0;
    for (int i = 0; i < n; i += 4099) {  // CPU reference on a sample
        const float ref = smooth_ring_cpu(h_in[i], iters);
        bad += count_mismatches("smooth_ring_spill", &h_slow[i], &ref, 1, 1e-4, 1e-4);
    }
    // Same arithmetic, different register allocation: the results agree (to the last bits).
    bad += count_mismatches("smooth_ring_nospill vs spill", h_fixed.data(), h_slow.data(), n, 1e-6, 1e-6);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
