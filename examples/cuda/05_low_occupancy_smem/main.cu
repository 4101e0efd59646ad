// 05_low_occupancy_smem: out = a*in + b over 2^25 floats (2 x 128 MiB) with 200 KiB of dynamic
// shared memory per 128-thread block (1 block per SM, 6.25 % occupancy) vs. a right-sized 1 KiB
// static buffer and 256-thread blocks (100 % occupancy).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o low_occupancy examples/cuda/05_low_occupancy_smem/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"
#include "fixed.cu"

int main()
{
    print_device();
    const int n = 1 << 25;
    const float a = 0.75f, b = 0.5f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_in(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = hash_float((uint32_t)i, 6u, -2.0f, 2.0f);
    float *d_in = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    // The bug: 200 KiB of dynamic shared memory per block (sm_90 allows up to 227 KiB per block
    // after opting in), of which 128 * 4 bytes are used. Capped at the device's opt-in limit so
    // that the example still runs (still one block per SM) on GPUs with less shared memory.
    const int slow_block = 128;
    const int slow_smem = std::min(200 * 1024, device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    CUDA_CHECK(cudaFuncSetAttribute(scale_bias_smem_oversized, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    slow_smem));
    const int slow_grid = (n + slow_block - 1) / slow_block;
    const int fixed_block = SCALE_BIAS_BLOCK;
    const int fixed_grid = (n + fixed_block - 1) / fixed_block;

    int slow_blocks_per_sm = 0, fixed_blocks_per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&slow_blocks_per_sm, scale_bias_smem_oversized,
                                                             slow_block, slow_smem));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fixed_blocks_per_sm, scale_bias_smem_rightsized,
                                                             fixed_block, 0));
    std::printf("occupancy: slow %d block(s) x %d threads per SM, fixed %d blocks x %d threads per SM\n",
                slow_blocks_per_sm, slow_block, fixed_blocks_per_sm, fixed_block);

    const double traffic = 2.0 * (double)bytes;
    auto no_reset = [] {};
    time_kernel("scale_bias_smem_oversized", traffic, 2.0 * n, no_reset, [&] {
        scale_bias_smem_oversized<<<slow_grid, slow_block, slow_smem>>>(d_in, d_slow, n, a, b);
    });
    time_kernel("scale_bias_smem_rightsized", traffic, 2.0 * n, no_reset, [&] {
        scale_bias_smem_rightsized<<<fixed_grid, fixed_block>>>(d_in, d_fixed, n, a, b);
    });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = std::fma(a, h_in[i], b);
    size_t bad = count_mismatches("scale_bias_smem_oversized", h_slow.data(), h_ref.data(), n, 0.0, 0.0);
    bad += count_mismatches("scale_bias_smem_rightsized vs oversized", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
