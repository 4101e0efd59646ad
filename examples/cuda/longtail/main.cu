// longtail: a program whose GPU time is a few dominant kernels and a long tail of small ones, for the
// staged-profiling cost benchmark (issue 27, scripts/bench_profiling_cost.sh). 3 dominant kernels
// (naive SGEMM, naive transpose, histogram with global atomics) and 60 distinct small element-wise
// kernels (4 families x 15, each its own function), every tail kernel launched twice. Nothing is
// verified beyond CUDA errors.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o longtail examples/cuda/longtail/main.cu

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

// ---- dominant kernels -------------------------------------------------------------------------
__global__ void lt_sgemm_naive(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float acc = 0.f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

__global__ void lt_transpose_naive(const float *in, float *out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) out[x * n + y] = in[y * n + x];
}

__global__ void lt_histogram_atomics(const float *x, unsigned *bins, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[((unsigned)(x[i] * 1000.f)) & 63u], 1u);
}

// ---- the tail: 60 distinct small kernels ------------------------------------------------------
#define TAIL_SCALE(K) \
    __global__ void tail_scale_##K(float *y, const float *x, int n) { \
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * (K + 1.5f) + 0.25f * K; }
#define TAIL_POLY(K) \
    __global__ void tail_poly_##K(float *y, const float *x, int n) { \
        int i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n) { float v = x[i]; y[i] = ((v * 0.5f + K) * v - 1.f) * v + 0.125f * K; } }
#define TAIL_SIN(K) \
    __global__ void tail_sin_##K(float *y, const float *x, int n) { \
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = __sinf(x[i] + K) + y[i]; }
#define TAIL_CLAMP(K) \
    __global__ void tail_clamp_##K(float *y, const float *x, int n) { \
        int i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n) y[i] = fminf(fmaxf(x[i] - 0.01f * K, -1.f), 1.f); }
#define FAMILY(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14)
FAMILY(TAIL_SCALE)
FAMILY(TAIL_POLY)
FAMILY(TAIL_SIN)
FAMILY(TAIL_CLAMP)

typedef void (*TailKernel)(float *, const float *, int);
#define ENTRY_SCALE(K) tail_scale_##K,
#define ENTRY_POLY(K) tail_poly_##K,
#define ENTRY_SIN(K) tail_sin_##K,
#define ENTRY_CLAMP(K) tail_clamp_##K,
static const TailKernel kTail[] = {FAMILY(ENTRY_SCALE) FAMILY(ENTRY_POLY) FAMILY(ENTRY_SIN) FAMILY(ENTRY_CLAMP)};

__global__ void fill(float *x, int n, float seed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (float)((i * 2654435761u + (unsigned)seed) % 1000u) / 1000.f;
}

int main() {
    const int gemm_n = 768, tr_n = 4096, hist_n = 1 << 24, tail_n = 1 << 16;
    float *a, *b, *c, *big_in, *big_out, *tx, *ty;
    unsigned *bins;
    CHECK(cudaMalloc(&a, sizeof(float) * gemm_n * gemm_n));
    CHECK(cudaMalloc(&b, sizeof(float) * gemm_n * gemm_n));
    CHECK(cudaMalloc(&c, sizeof(float) * gemm_n * gemm_n));
    CHECK(cudaMalloc(&big_in, sizeof(float) * hist_n));
    CHECK(cudaMalloc(&big_out, sizeof(float) * hist_n));
    CHECK(cudaMalloc(&tx, sizeof(float) * tail_n));
    CHECK(cudaMalloc(&ty, sizeof(float) * tail_n));
    CHECK(cudaMalloc(&bins, sizeof(unsigned) * 64));
    CHECK(cudaMemset(bins, 0, sizeof(unsigned) * 64));
    fill<<<(gemm_n * gemm_n + 255) / 256, 256>>>(a, gemm_n * gemm_n, 1.f);
    fill<<<(gemm_n * gemm_n + 255) / 256, 256>>>(b, gemm_n * gemm_n, 2.f);
    fill<<<(hist_n + 255) / 256, 256>>>(big_in, hist_n, 3.f);
    fill<<<(tail_n + 255) / 256, 256>>>(tx, tail_n, 4.f);
    CHECK(cudaGetLastError());

    lt_sgemm_naive<<<dim3(gemm_n / 16, gemm_n / 16), dim3(16, 16)>>>(a, b, c, gemm_n);
    lt_transpose_naive<<<dim3(tr_n / 32, tr_n / 8), dim3(32, 8)>>>(big_in, big_out, tr_n);
    lt_histogram_atomics<<<1056, 256>>>(big_in, bins, hist_n);
    const int tail_count = (int)(sizeof(kTail) / sizeof(kTail[0]));
    for (int rep = 0; rep < 2; ++rep)
        for (int k = 0; k < tail_count; ++k) kTail[k]<<<(tail_n + 255) / 256, 256>>>(ty, tx, tail_n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("longtail: 3 dominant kernels + %d tail kernels x 2 launches\n", tail_count);
    return 0;
}
