// unseen2/10_stencil3d_7pt_naive_cube / slow: the basic 3-D seven-point stencil of PMPP 4th ed. ch. 8
// (Fig. 8.6) on an N^3 grid: 8 x 8 x 8 thread blocks, one output point per thread, all seven inputs read
// from global memory, unsigned int indices, interior points only. Each warp covers 4 rows of 8 floats
// (32-byte pieces), and each input is fetched again by up to 7 threads from L1/L2.
// Launch: block (8, 8, 8), grid (ceil(N / 8))^3; out's boundary keeps its initial zeros.
#define C0 0.5f
#define C1 0.0833333f
#define C2 0.0833333f
#define C3 0.0833333f
#define C4 0.0833333f
#define C5 0.0833333f
#define C6 0.0833333f

extern "C" __global__ void stencil_kernel(const float *in, float *out, unsigned int N)
{
    unsigned int i = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
        out[i * N * N + j * N + k] = C0 * in[i * N * N + j * N + k]
                                   + C1 * in[i * N * N + j * N + (k - 1)]
                                   + C2 * in[i * N * N + j * N + (k + 1)]
                                   + C3 * in[i * N * N + (j - 1) * N + k]
                                   + C4 * in[i * N * N + (j + 1) * N + k]
                                   + C5 * in[(i - 1) * N * N + j * N + k]
                                   + C6 * in[(i + 1) * N * N + j * N + k];
    }
}
