// 07_compute_bound_fma: 2^22 threads x 8 independent FMA chains x 512 steps = 34.4 GFLOP of FP32
// FMA on 16 MiB of input. At its compute roof: timed, checked against the CPU, no fixed kernel.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o fma examples/cuda/07_compute_bound_fma/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"

int main()
{
    print_device();
    const int n = 1 << 22;
    const int iters = 512;
    const float b = 0.999f, c = 0.001f;  // a -> 1: stays normal, never overflows or goes subnormal
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 8u, -4.0f, 4.0f);
    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0xFF, bytes));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    const double flops = 2.0 * (double)n * FMA_CHAINS * iters;
    const float ms = time_kernel("fma_chains_compute_bound", 2.0 * (double)bytes, flops, [] {},
                                 [&] { fma_chains_compute_bound<<<grid, block>>>(d_in, d_out, n, iters, b, c); });
    // Rough speed-of-light line: 128 FP32 lanes x 2 flop per SM per clock at the current clock.
    const double peak = 2.0 * 128.0 * device_attr(cudaDevAttrMultiProcessorCount) *
                        (double)device_attr(cudaDevAttrClockRate) * 1e3;
    std::printf("fp32 peak at the reported clock: %.1f TFLOP/s, achieved %.1f %%\n", peak / 1e12,
                100.0 * flops / (ms * 1e-3) / peak);

    std::vector<float> h_out(n);
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int i = 0; i < n; i += 4099) {  // CPU reference on a sample, same operation order
        float a[FMA_CHAINS];
        for (int k = 0; k < FMA_CHAINS; ++k)
            a[k] = h_in[i] + 0.125f * (float)k;
        for (int it = 0; it < iters; ++it)
            for (int k = 0; k < FMA_CHAINS; ++k)
                a[k] = std::fma(a[k], b, c);
        float ref = 0.0f;
        for (int k = 0; k < FMA_CHAINS; ++k)
            ref += a[k];
        bad += count_mismatches("fma_chains_compute_bound", &h_out[i], &ref, 1, 1e-5, 1e-5);
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return finish(bad);
}
