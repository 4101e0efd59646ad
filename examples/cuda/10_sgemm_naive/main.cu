// 10_sgemm_naive: FP32 SGEMM, M = N = K = 2048 (17.2 GFLOP), C = alpha*A@B + beta*C:
// siboehm kernel 1 (naive, uncoalesced) vs. kernel 3 (coalesced + 32x32 shared-memory tiles).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o sgemm examples/cuda/10_sgemm_naive/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

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
