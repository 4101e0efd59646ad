// suite: every example kernel (slow and fixed) in one program, each launched ONCE with the
// examples' sizes, for the profiling-cost benchmark and multi-kernel reports. Nothing is verified
// here beyond CUDA errors (each example's own main.cu checks its results).
// Inputs are a deterministic hash pattern: 2^24 values computed on the host and tiled on the
// device, which keeps host time short. Before timing, cudaFuncGetAttributes loads every kernel
// (lazy module loading would otherwise bill the load to the first launch) and prints its
// registers, static shared memory and local memory.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o suite examples/cuda/suite/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "../01_transpose_naive/slow.cu"
#include "../01_transpose_naive/fixed.cu"
#include "../02_transpose_bank_conflicts/slow.cu"
#include "../02_transpose_bank_conflicts/fixed.cu"
#include "../03_reduction_divergent/slow.cu"
#include "../03_reduction_divergent/fixed.cu"
#include "../04_small_grid/slow.cu"
#include "../04_small_grid/fixed.cu"
#include "../05_low_occupancy_smem/slow.cu"
#include "../05_low_occupancy_smem/fixed.cu"
#include "../06_register_spills/slow.cu"
#include "../06_register_spills/fixed.cu"
#include "../07_compute_bound_fma/slow.cu"
#include "../08_vector_copy_near_peak/slow.cu"
#include "../09_histogram_atomics/slow.cu"
#include "../09_histogram_atomics/fixed.cu"
#include "../10_sgemm_naive/slow.cu"
#include "../10_sgemm_naive/fixed.cu"
#include "../11_strided_access/slow.cu"
#include "../11_strided_access/fixed.cu"

#include <functional>

struct SuiteEntry {
    const char *name;
    const void *func;                     // for cudaFuncGetAttributes
    double bytes;                         // minimal DRAM traffic, for the GB/s column
    std::function<void()> launch;         // exactly one kernel launch
    std::function<void()> setup = [] {};  // runs before the launch, outside the timed region
};

int main()
{
    print_device();
    const int sms = device_attr(cudaDevAttrMultiProcessorCount);
    const int wave_grid = sms * (device_attr(cudaDevAttrMaxThreadsPerMultiProcessor) / 256);

    // Buffers: 512 MiB in / out (2^27 floats), histogram data, SGEMM C, a scalar.
    const size_t big = (size_t)1 << 27;
    const size_t pattern = (size_t)1 << 24;
    float *d_in = nullptr, *d_out = nullptr, *d_scalar = nullptr, *d_C = nullptr;
    int *d_hist_data = nullptr, *d_bins = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, big * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, big * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_scalar, sizeof(float)));
    {
        std::vector<float> h(pattern);
        for (size_t i = 0; i < pattern; ++i)
            h[i] = hash_float((uint32_t)i, 21u, -1.0f, 1.0f);
        CUDA_CHECK(cudaMemcpy(d_in, h.data(), pattern * sizeof(float), cudaMemcpyHostToDevice));
        for (size_t off = pattern; off < big; off += pattern)
            CUDA_CHECK(cudaMemcpy(d_in + off, d_in, pattern * sizeof(float), cudaMemcpyDeviceToDevice));
    }
    const int hist_n = 1 << 25;
    CUDA_CHECK(cudaMalloc(&d_hist_data, (size_t)hist_n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_bins, HIST_BINS * sizeof(int)));
    {
        // Same skew as 09_histogram_atomics: 7/8 of the values in 8 hot bins.
        std::vector<int> h(pattern);
        for (size_t i = 0; i < pattern; ++i) {
            const uint32_t v = hash_u32((uint32_t)i * 0x9E3779B9U + 0x2545F491U);
            h[i] = (v & 7u) != 0u ? (int)(((v >> 3) & 7u) * 32u + 5u) : (int)((v >> 8) & 255u);
        }
        for (size_t off = 0; off < (size_t)hist_n; off += pattern)
            CUDA_CHECK(cudaMemcpy(d_hist_data + off, h.data(), pattern * sizeof(int), cudaMemcpyHostToDevice));
    }
    const int S = 2048;  // SGEMM M = N = K
    CUDA_CHECK(cudaMalloc(&d_C, (size_t)S * S * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_C, d_in + 2 * (size_t)S * S, (size_t)S * S * sizeof(float), cudaMemcpyDeviceToDevice));
    const float *d_A = d_in, *d_B = d_in + (size_t)S * S;

    const int T = 8192;  // transpose: T x T
    const int n_reduce = 1 << 26, n_saxpy = 1 << 25, n_scale = 1 << 25, n_ring = 1 << 22;
    const int n_fma = 1 << 22, n_copy = 1 << 26, n_particles = 1 << 24;
    const int oversized_smem = std::min(200 * 1024, device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    CUDA_CHECK(cudaFuncSetAttribute(scale_bias_smem_oversized, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    oversized_smem));
    const dim3 tr_block(TILE_DIM, BLOCK_ROWS), tr_grid(T / TILE_DIM, T / TILE_DIM);
    const double tr_bytes = 2.0 * T * (double)T * 4;
    const double sgemm_bytes = 4.0 * S * (double)S * 4;
    auto zero_scalar = [&] { CUDA_CHECK(cudaMemset(d_scalar, 0, sizeof(float))); };
    auto zero_bins = [&] { CUDA_CHECK(cudaMemset(d_bins, 0, HIST_BINS * sizeof(int))); };

    std::vector<SuiteEntry> suite = {
        {"transpose_naive", (const void *)transpose_naive, tr_bytes,
         [&] { transpose_naive<<<tr_grid, tr_block>>>(d_out, d_in, T, T); }},
        {"transpose_tiled_padded", (const void *)transpose_tiled_padded, tr_bytes,
         [&] { transpose_tiled_padded<<<tr_grid, tr_block>>>(d_out, d_in, T, T); }},
        {"transpose_smem_conflicts", (const void *)transpose_smem_conflicts, tr_bytes,
         [&] { transpose_smem_conflicts<<<tr_grid, tr_block>>>(d_out, d_in, T, T); }},
        {"transpose_smem_padded", (const void *)transpose_smem_padded, tr_bytes,
         [&] { transpose_smem_padded<<<tr_grid, tr_block>>>(d_out, d_in, T, T); }},
        {"reduce_interleaved_divergent", (const void *)reduce_interleaved_divergent, 4.0 * n_reduce,
         [&] { reduce_interleaved_divergent<<<n_reduce / REDUCE_BLOCK, REDUCE_BLOCK>>>(d_in, d_scalar, n_reduce); },
         zero_scalar},
        {"reduce_sequential_shfl", (const void *)reduce_sequential_shfl, 4.0 * n_reduce,
         [&] { reduce_sequential_shfl<<<wave_grid, REDUCE_BLOCK>>>(d_in, d_scalar, n_reduce); }, zero_scalar},
        {"saxpy_gridstride_small_grid", (const void *)saxpy_gridstride_small_grid, 12.0 * n_saxpy,
         [&] { saxpy_gridstride_small_grid<<<32, 256>>>(d_in, d_in + n_saxpy, d_out, n_saxpy, 1.75f); }},
        {"saxpy_gridstride_full_grid", (const void *)saxpy_gridstride_full_grid, 12.0 * n_saxpy,
         [&] { saxpy_gridstride_full_grid<<<wave_grid, 256>>>(d_in, d_in + n_saxpy, d_out, n_saxpy, 1.75f); }},
        {"scale_bias_smem_oversized", (const void *)scale_bias_smem_oversized, 8.0 * n_scale,
         [&] { scale_bias_smem_oversized<<<n_scale / 128, 128, oversized_smem>>>(d_in, d_out, n_scale, 0.75f, 0.5f); }},
        {"scale_bias_smem_rightsized", (const void *)scale_bias_smem_rightsized, 8.0 * n_scale,
         [&] {
             scale_bias_smem_rightsized<<<n_scale / SCALE_BIAS_BLOCK, SCALE_BIAS_BLOCK>>>(d_in, d_out, n_scale, 0.75f,
                                                                                       0.5f);
         }},
        {"smooth_ring_spill", (const void *)smooth_ring_spill, 8.0 * n_ring,
         [&] { smooth_ring_spill<<<n_ring / 256, 256>>>(d_in, d_out, n_ring, 32); }},
        {"smooth_ring_nospill", (const void *)smooth_ring_nospill, 8.0 * n_ring,
         [&] { smooth_ring_nospill<<<n_ring / 256, 256>>>(d_in, d_out, n_ring, 32); }},
        {"fma_chains_compute_bound", (const void *)fma_chains_compute_bound, 8.0 * n_fma,
         [&] { fma_chains_compute_bound<<<n_fma / 256, 256>>>(d_in, d_out, n_fma, 512, 0.999f, 0.001f); }},
        {"scale_copy_float4", (const void *)scale_copy_float4, 8.0 * n_copy,
         [&] { scale_copy_float4<<<wave_grid, 256>>>(d_in, d_out, n_copy, 1.5f); }},
        {"histogram_global_atomics", (const void *)histogram_global_atomics, 4.0 * hist_n,
         [&] { histogram_global_atomics<<<wave_grid, 256>>>(d_hist_data, d_bins, hist_n); }, zero_bins},
        {"histogram_smem_privatized", (const void *)histogram_smem_privatized, 4.0 * hist_n,
         [&] { histogram_smem_privatized<<<wave_grid, 256>>>(d_hist_data, d_bins, hist_n); }, zero_bins},
        {"sgemm_naive", (const void *)sgemm_naive, sgemm_bytes,
         [&] { sgemm_naive<<<dim3(S / 32, S / 32), dim3(32, 32)>>>(S, S, S, 1.0f, d_A, d_B, 0.5f, d_C); }},
        {"sgemm_smem_tiled", (const void *)sgemm_smem_tiled, sgemm_bytes,
         [&] {
             sgemm_smem_tiled<<<dim3(S / SGEMM_TILE, S / SGEMM_TILE), dim3(SGEMM_TILE * SGEMM_TILE)>>>(
                 S, S, S, 1.0f, d_A, d_B, 0.5f, d_C);
         }},
        {"particles_advance_aos", (const void *)particles_advance_aos, 12.0 * n_particles,
         [&] { particles_advance_aos<<<n_particles / 256, 256>>>(d_in, d_out, n_particles, 0.01f); }},
        {"particles_advance_soa", (const void *)particles_advance_soa, 12.0 * n_particles,
         [&] { particles_advance_soa<<<n_particles / 256, 256>>>(d_in, d_out, n_particles, 0.01f); }},
    };

    for (const SuiteEntry &e : suite) {
        cudaFuncAttributes attr;
        CUDA_CHECK(cudaFuncGetAttributes(&attr, e.func));
        std::printf("resources: %s: %d registers, %zu B static smem, %zu B local per thread\n", e.name,
                    attr.numRegs, attr.sharedSizeBytes, attr.localSizeBytes);
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    float total = 0.0f;
    for (const SuiteEntry &e : suite) {
        e.setup();
        CUDA_CHECK(cudaEventRecord(start));
        e.launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        total += ms;
        std::printf("%s: %.3f ms, %.1f GB/s\n", e.name, ms, e.bytes / (ms * 1e-3) / 1e9);
    }
    std::printf("total kernel time: %.3f ms over %zu kernels\n", total, suite.size());

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_scalar));
    CUDA_CHECK(cudaFree(d_C));
    CUDA_CHECK(cudaFree(d_hist_data));
    CUDA_CHECK(cudaFree(d_bins));
    std::printf("PASS\n");
    return 0;
}
