// 02_transpose_bank_conflicts: shared-tile transpose with tile[32][32] (32-way bank conflicts on the
// column read) vs. tile[32][33]. 8192 x 8192 floats (256 MiB per matrix, beyond the 50 MB L2).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o transpose examples/cuda/02_transpose_bank_conflicts/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

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

    time_kernel("transpose_smem_conflicts", traffic, 0.0, no_reset,
                [&] { transpose_smem_conflicts<<<grid, block>>>(d_slow, d_in, width, height); });
    time_kernel("transpose_smem_padded", traffic, 0.0, no_reset,
                [&] { transpose_smem_padded<<<grid, block>>>(d_fixed, d_in, width, height); });

    std::vector<float> h_slow(n), h_fixed(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));

    // CPU reference on every 16th output row (exact), then fixed == slow everywhere (exact).
    size_t bad = 0;
    for (int r = 0; r < width && bad < 5; r += 16) {  // output row r = input column r
        for (int c = 0; c < height; ++c) {
            const float ref = h_in[(size_t)c * width + r];
            if (!(h_slow[(size_t)r * height + c] == ref)) {
                std::fprintf(stderr, "transpose_smem_conflicts: wrong at (%d,%d)\n", r, c);
                ++bad;
                break;
            }
        }
    }
    bad += count_mismatches("transpose_smem_padded vs conflicts", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
