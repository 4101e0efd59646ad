// unseen2/10_stencil3d_7pt_naive_cube: the basic 3-D seven-point stencil of PMPP 4th ed. ch. 8 on an
// N^3 grid, interior points only (out's boundary keeps its initial zeros).
// Thread-coarsened version: each thread computes CZ = 16 consecutive output points along i for one
// (j, k) column. The index math is done once per thread, and the i-1 / i / i+1 inputs slide through
// registers (one new global load of the centre column per output instead of three); only the four
// in-plane neighbours are loaded per point (from L1/L2). Blocks are 32 x 8 so each warp reads full
// 128-byte rows.
// Launch: block (32, 8, 1), grid (ceil(N / 32), ceil(N / 8), ceil(N / 16)).
#define C0 0.5f
#define C1 0.0833333f
#define C2 0.0833333f
#define C3 0.0833333f
#define C4 0.0833333f
#define C5 0.0833333f
#define C6 0.0833333f

#define CZ 16

extern "C" __global__ void __launch_bounds__(256) stencil_kernel(const float *in, float *out, unsigned int N)
{
    const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned int i0 = blockIdx.z * CZ;
    if (j < 1 || j >= N - 1 || k < 1 || k >= N - 1) return;
    const unsigned int ib = i0 < 1u ? 1u : i0;
    const unsigned int ie = (i0 + CZ < N - 1) ? (i0 + CZ) : (N - 1); // outputs for i in [ib, ie)
    if (ib >= ie) return;

    const size_t plane = (size_t)N * N;
    const size_t col = (size_t)j * N + k;
    const float *p = in + (size_t)ib * plane + col; // centre of plane ib
    float *q = out + (size_t)ib * plane + col;

    float prev = __ldg(p - plane);
    float cur = __ldg(p);
#pragma unroll 4
    for (unsigned int i = ib; i < ie; ++i) {
        const float next = __ldg(p + plane);
        const float km = __ldg(p - 1);
        const float kp = __ldg(p + 1);
        const float jm = __ldg(p - N);
        const float jp = __ldg(p + N);
        *q = C0 * cur
           + C1 * km
           + C2 * kp
           + C3 * jm
           + C4 * jp
           + C5 * prev
           + C6 * next;
        prev = cur;
        cur = next;
        p += plane;
        q += plane;
    }
}
