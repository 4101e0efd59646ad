// unseen2/10_stencil3d_7pt_naive_cube / fixed: 2.5-D blocking (P. Micikevicius, "3D Finite Difference
// Computation on GPUs using CUDA", GPGPU-2 2009; PMPP 4th ed. ch. 8.5 register tiling): a 32 x 8 block
// covers an (x, y) tile with full 128-byte rows and marches along z over Z_PER_BLOCK planes, carrying the
// z-1 / z / z+1 values in registers, so each input plane is read once per tile instead of three times.
// Same terms in the same order as the slow kernel. Launch: block (32, 8),
// grid (ceil(N / 32), ceil(N / 8), ceil((N - 2) / Z_PER_BLOCK)) (spec variant).
#define C0 0.5f
#define C1 0.0833333f
#define C2 0.0833333f
#define C3 0.0833333f
#define C4 0.0833333f
#define C5 0.0833333f
#define C6 0.0833333f
#define Z_PER_BLOCK 32

extern "C" __global__ void stencil_zmarch(const float *__restrict__ in, float *__restrict__ out, unsigned int N)
{
    const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (k < 1 || k >= N - 1 || j < 1 || j >= N - 1) return;
    const unsigned int i0 = 1 + blockIdx.z * Z_PER_BLOCK;
    const unsigned int i1 = min(i0 + Z_PER_BLOCK, N - 1);
    if (i0 >= i1) return;
    const size_t plane = (size_t)N * N;
    size_t idx = (size_t)i0 * plane + (size_t)j * N + k;
    float below = in[idx - plane];
    float cur = in[idx];
    for (unsigned int i = i0; i < i1; ++i, idx += plane) {
        const float above = in[idx + plane];
        out[idx] = C0 * cur
                 + C1 * in[idx - 1]
                 + C2 * in[idx + 1]
                 + C3 * in[idx - N]
                 + C4 * in[idx + N]
                 + C5 * below
                 + C6 * above;
        below = cur;
        cur = above;
    }
}
