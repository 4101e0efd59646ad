// 03_reduction_divergent: sum of 2^26 floats (256 MiB). Harris reduction #1 (divergent
// interleaved addressing, one element per thread) vs. sequential addressing + first add during
// load + warp-shuffle tail, one wave of blocks.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o reduction examples/cuda/03_reduction_divergent/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"
#include "fixed.cu"

int main()
{
    print_device();
    const int n = 1 << 26;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    double ref = 0.0;
    for (int i = 0; i < n; ++i) {
        h_in[i] = hash_float((uint32_t)i, 3u, 0.0f, 1.0f);
        ref += h_in[i];
    }

    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    auto zero_out = [&] { CUDA_CHECK(cudaMemset(d_out, 0, sizeof(float))); };

    const int slow_grid = (n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;  // one element per thread
    const int fixed_grid = 8 * device_attr(cudaDevAttrMultiProcessorCount);  // one full wave
    float slow_sum = 0.0f, fixed_sum = 0.0f;

    time_kernel("reduce_interleaved_divergent", (double)bytes, (double)n, zero_out,
                [&] { reduce_interleaved_divergent<<<slow_grid, REDUCE_BLOCK>>>(d_in, d_out, n); });
    CUDA_CHECK(cudaMemcpy(&slow_sum, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    time_kernel("reduce_sequential_shfl", (double)bytes, (double)n, zero_out,
                [&] { reduce_sequential_shfl<<<fixed_grid, REDUCE_BLOCK>>>(d_in, d_out, n); });
    CUDA_CHECK(cudaMemcpy(&fixed_sum, d_out, sizeof(float), cudaMemcpyDeviceToHost));

    std::printf("sum: reference %.6e, slow %.6e, fixed %.6e\n", ref, (double)slow_sum, (double)fixed_sum);
    // Float atomics make the summation order (hence the last bits) launch-dependent.
    size_t bad = count_mismatches("reduce_interleaved_divergent", &slow_sum, &ref, 1, 0.0, 2e-4);
    bad += count_mismatches("reduce_sequential_shfl", &fixed_sum, &ref, 1, 0.0, 2e-4);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return finish(bad);
}
