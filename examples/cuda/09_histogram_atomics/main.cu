// 09_histogram_atomics: 256-bin histogram of 2^25 skewed ints (128 MiB; 7/8 of the values in 8 hot
// bins, one per 128-byte line) with global atomics vs. a shared-memory privatized histogram.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o histogram examples/cuda/09_histogram_atomics/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

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
