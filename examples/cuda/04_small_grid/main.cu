// 04_small_grid: z = a*x + y over 2^25 floats (3 x 128 MiB) with a grid-stride loop launched with
// 32 blocks (small grid) vs. one full wave of blocks sized from the device attributes.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o small_grid examples/cuda/04_small_grid/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"
#include "fixed.cu"

int main()
{
    print_device();
    const int n = 1 << 25;
    const float a = 1.75f;
    const size_t bytes = (size_t)n * sizeof(float);

    std::vector<float> h_x(n), h_y(n);
    for (int i = 0; i < n; ++i) {
        h_x[i] = hash_float((uint32_t)i, 4u, -1.0f, 1.0f);
        h_y[i] = hash_float((uint32_t)i, 5u, -1.0f, 1.0f);
    }
    float *d_x = nullptr, *d_y = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, bytes));

    const int block = 256;
    const int slow_grid = 32;  // the bug: a hard-coded grid far below the SM count
    const int sms = device_attr(cudaDevAttrMultiProcessorCount);
    const int threads_per_sm = device_attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    const int fixed_grid = sms * (threads_per_sm / block);  // one full wave
    std::printf("launch: slow grid %d x %d, fixed grid %d x %d\n", slow_grid, block, fixed_grid, block);

    const double traffic = 3.0 * (double)bytes;
    auto no_reset = [] {};
    time_kernel("saxpy_gridstride_small_grid", traffic, 2.0 * n, no_reset,
                [&] { saxpy_gridstride_small_grid<<<slow_grid, block>>>(d_x, d_y, d_slow, n, a); });
    time_kernel("saxpy_gridstride_full_grid", traffic, 2.0 * n, no_reset,
                [&] { saxpy_gridstride_full_grid<<<fixed_grid, block>>>(d_x, d_y, d_fixed, n, a); });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = a * h_x[i] + h_y[i];
    // The device may contract a*x+y into one FMA: allow a few ulps against the CPU.
    size_t bad = count_mismatches("saxpy_gridstride_small_grid", h_slow.data(), h_ref.data(), n, 1e-6, 1e-6);
    bad += count_mismatches("saxpy_gridstride_full_grid vs small_grid", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
