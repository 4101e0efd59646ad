// 11_strided_access: x + vx*dt for 2^24 particles of 8 floats (512 MiB): array-of-structures
// (stride-8 loads, 1/4 of each fetched sector used) vs. structure-of-arrays (contiguous loads).
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o strided examples/cuda/11_strided_access/main.cu

#include "../common/example_harness.cuh"  // host harness: CUDA_CHECK, hash inputs, EXAMPLE_REPS,
                                          // time_kernel, count_mismatches, finish

#include "slow.cu"
#include "fixed.cu"

int main()
{
    print_device();
    const int n = 1 << 24;
    const float dt = 0.01f;
    const size_t elems = (size_t)n * PARTICLE_FIELDS;
    const size_t bytes = elems * sizeof(float);
    const size_t out_bytes = (size_t)n * sizeof(float);

    float *d_aos = nullptr, *d_soa = nullptr, *d_slow = nullptr, *d_fixed = nullptr;
    CUDA_CHECK(cudaMalloc(&d_aos, bytes));
    CUDA_CHECK(cudaMalloc(&d_soa, bytes));
    CUDA_CHECK(cudaMalloc(&d_slow, out_bytes));
    CUDA_CHECK(cudaMalloc(&d_fixed, out_bytes));

    // Same values in both layouts: field f of particle i = hash(i * F + f). Built and uploaded in
    // chunks of particles to keep host memory and time small; x and vx are kept for the reference.
    std::vector<float> h_x(n), h_vx(n);
    {
        const int chunk = 1 << 20;
        std::vector<float> aos((size_t)chunk * PARTICLE_FIELDS), soa((size_t)chunk * PARTICLE_FIELDS);
        for (int c0 = 0; c0 < n; c0 += chunk) {
            const int m = std::min(chunk, n - c0);
            for (int p = 0; p < m; ++p) {
                for (int f = 0; f < PARTICLE_FIELDS; ++f) {
                    const size_t i = (size_t)c0 + p;
                    const float v = hash_float((uint32_t)(i * PARTICLE_FIELDS + f), 13u, -10.0f, 10.0f);
                    aos[(size_t)p * PARTICLE_FIELDS + f] = v;
                    soa[(size_t)f * m + p] = v;
                }
                h_x[(size_t)c0 + p] = aos[(size_t)p * PARTICLE_FIELDS + 0];
                h_vx[(size_t)c0 + p] = aos[(size_t)p * PARTICLE_FIELDS + 3];
            }
            CUDA_CHECK(cudaMemcpy(d_aos + (size_t)c0 * PARTICLE_FIELDS, aos.data(),
                                  (size_t)m * PARTICLE_FIELDS * sizeof(float), cudaMemcpyHostToDevice));
            for (int f = 0; f < PARTICLE_FIELDS; ++f)
                CUDA_CHECK(cudaMemcpy(d_soa + (size_t)f * n + c0, soa.data() + (size_t)f * m, (size_t)m * sizeof(float),
                                      cudaMemcpyHostToDevice));
        }
    }
    CUDA_CHECK(cudaMemset(d_slow, 0xFF, out_bytes));
    CUDA_CHECK(cudaMemset(d_fixed, 0xFF, out_bytes));

    const int block = 256;
    const int grid = (n + block - 1) / block;
    const double useful = 3.0 * (double)out_bytes;  // x and vx read, out written
    auto no_reset = [] {};
    time_kernel("particles_advance_aos", useful, 2.0 * n, no_reset,
                [&] { particles_advance_aos<<<grid, block>>>(d_aos, d_slow, n, dt); });
    time_kernel("particles_advance_soa", useful, 2.0 * n, no_reset,
                [&] { particles_advance_soa<<<grid, block>>>(d_soa, d_fixed, n, dt); });

    std::vector<float> h_slow(n), h_fixed(n), h_ref(n);
    CUDA_CHECK(cudaMemcpy(h_slow.data(), d_slow, out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fixed.data(), d_fixed, out_bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        h_ref[i] = h_x[i] + h_vx[i] * dt;
    // The device may contract x + vx*dt into one FMA: allow a few ulps against the CPU.
    size_t bad = count_mismatches("particles_advance_aos", h_slow.data(), h_ref.data(), n, 1e-6, 1e-6);
    bad += count_mismatches("particles_advance_soa vs aos", h_fixed.data(), h_slow.data(), n, 0.0, 0.0);

    CUDA_CHECK(cudaFree(d_aos));
    CUDA_CHECK(cudaFree(d_soa));
    CUDA_CHECK(cudaFree(d_slow));
    CUDA_CHECK(cudaFree(d_fixed));
    return finish(bad);
}
