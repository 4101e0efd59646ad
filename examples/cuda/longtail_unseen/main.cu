// longtail_unseen: a second long-tail program for the staged-profiling benchmark (issue 27), written
// after the staging rules and never used to tune them: 3 dominant kernels (5-point stencil, softmax with
// one thread per row, matrix-vector with one thread per row) launched twice each, and a tail of 48
// small kernels: 24 instantiations of one template (one function name, 24 demangled names) and 24
// distinct integer-mix kernels, each launched twice. Nothing is verified beyond CUDA errors.
// Build: nvcc -arch=sm_90 -O3 -lineinfo -o longtail_unseen examples/cuda/longtail_unseen/main.cu

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

__global__ void un_stencil5(const float *in, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    out[y * w + x] = 0.2f * (in[y * w + x] + in[y * w + x - 1] + in[y * w + x + 1] + in[(y - 1) * w + x] +
                             in[(y + 1) * w + x]);
}

__global__ void un_softmax_row_per_thread(const float *in, float *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *row = in + (size_t)r * cols;
    float m = row[0], s = 0.f;
    for (int j = 1; j < cols; ++j) m = fmaxf(m, row[j]);
    for (int j = 0; j < cols; ++j) s += __expf(row[j] - m);
    for (int j = 0; j < cols; ++j) out[(size_t)r * cols + j] = __expf(row[j] - m) / s;
}

__global__ void un_gemv_row_per_thread(const float *a, const float *x, float *y, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    float acc = 0.f;
    for (int j = 0; j < n; ++j) acc += a[(size_t)r * n + j] * x[j];
    y[r] = acc;
}

template <int K>
__global__ void tail_template(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (float)(K + 1) - (float)(K & 3);
}

#define TAIL_MIX(K) \
    __global__ void tail_mix_##K(int *y, const int *x, int n) { \
        int i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n) y[i] = (x[i] * (2 * K + 1)) ^ (x[i] >> (K % 7)); }
#define TWENTY_FOUR(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) \
    M(12) M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23)
TWENTY_FOUR(TAIL_MIX)

typedef void (*FloatTail)(float *, const float *, int);
typedef void (*IntTail)(int *, const int *, int);
#define ENTRY_TEMPLATE(K) tail_template<K>,
#define ENTRY_MIX(K) tail_mix_##K,
static const FloatTail kTemplates[] = {TWENTY_FOUR(ENTRY_TEMPLATE)};
static const IntTail kMix[] = {TWENTY_FOUR(ENTRY_MIX)};

__global__ void seed(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (float)((i * 2246822519u) % 997u) / 997.f;
}

int main() {
    const int w = 4096, h = 4096, rows = 16384, cols = 512, gemv_n = 8192, tail_n = 1 << 15;
    float *grid_in, *grid_out, *sm_in, *sm_out, *mat, *vec, *res, *tx, *ty;
    int *ix, *iy;
    CHECK(cudaMalloc(&grid_in, sizeof(float) * w * h));
    CHECK(cudaMalloc(&grid_out, sizeof(float) * w * h));
    CHECK(cudaMalloc(&sm_in, sizeof(float) * rows * cols));
    CHECK(cudaMalloc(&sm_out, sizeof(float) * rows * cols));
    CHECK(cudaMalloc(&mat, sizeof(float) * gemv_n * gemv_n));
    CHECK(cudaMalloc(&vec, sizeof(float) * gemv_n));
    CHECK(cudaMalloc(&res, sizeof(float) * gemv_n));
    CHECK(cudaMalloc(&tx, sizeof(float) * tail_n));
    CHECK(cudaMalloc(&ty, sizeof(float) * tail_n));
    CHECK(cudaMalloc(&ix, sizeof(int) * tail_n));
    CHECK(cudaMalloc(&iy, sizeof(int) * tail_n));
    seed<<<(w * h + 255) / 256, 256>>>(grid_in, w * h);
    seed<<<(rows * cols + 255) / 256, 256>>>(sm_in, rows * cols);
    seed<<<(gemv_n * gemv_n + 255) / 256, 256>>>(mat, gemv_n * gemv_n);
    seed<<<(gemv_n + 255) / 256, 256>>>(vec, gemv_n);
    seed<<<(tail_n + 255) / 256, 256>>>(tx, tail_n);
    CHECK(cudaMemset(ix, 7, sizeof(int) * tail_n));
    CHECK(cudaGetLastError());
    for (int rep = 0; rep < 2; ++rep) {
        un_stencil5<<<dim3(w / 32, h / 8), dim3(32, 8)>>>(grid_in, grid_out, w, h);
        un_softmax_row_per_thread<<<rows / 128, 128>>>(sm_in, sm_out, rows, cols);
        un_gemv_row_per_thread<<<gemv_n / 128, 128>>>(mat, vec, res, gemv_n);
        for (FloatTail k : kTemplates) k<<<(tail_n + 127) / 128, 128>>>(ty, tx, tail_n);
        for (IntTail k : kMix) k<<<(tail_n + 127) / 128, 128>>>(iy, ix, tail_n);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("longtail_unseen: 3 dominant + 48 tail kernels, 2 rounds\n");
    return 0;
}
