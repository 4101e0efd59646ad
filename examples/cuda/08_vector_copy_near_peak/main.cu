// 08_vector_copy_near_peak: out = a*in over 2^26 floats (256 MiB read + 256 MiB written) with
// float4 accesses: a DRAM-bound kernel already near its roof. Timed and checked, no fixed kernel.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o copy examples/cuda/08_vector_copy_near_peak/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"

int main()
{
    print_device();
    const int n = 1 << 26;
    const float a = 1.5f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 9u, -1.0f, 1.0f);
    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0xFF, bytes));

    const int block = 256;
    const int grid = device_attr(cudaDevAttrMultiProcessorCount) *
                     (device_attr(cudaDevAttrMaxThreadsPerMultiProcessor) / block);
    const float ms = time_kernel("scale_copy_float4", 2.0 * (double)bytes, (double)n, [] {},
                                 [&] { scale_copy_float4<<<grid, block>>>(d_in, d_out, n, a); });
    // Theoretical DRAM bandwidth from the device attributes (DDR: 2 transfers per clock).
    const double peak = 2.0 * (double)device_attr(cudaDevAttrMemoryClockRate) * 1e3 *
                        (double)device_attr(cudaDevAttrGlobalMemoryBusWidth) / 8.0;
    std::printf("dram peak from attributes: %.0f GB/s, achieved %.1f %%\n", peak / 1e9,
                100.0 * 2.0 * (double)bytes / (ms * 1e-3) / peak);

    std::vector<float> h_out(n);
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int i = 0; i < n && bad < 5; ++i) {
        const float ref = a * h_in[i];
        bad += count_mismatches("scale_copy_float4", &h_out[i], &ref, 1, 0.0, 0.0);
    }

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return finish(bad);
}
