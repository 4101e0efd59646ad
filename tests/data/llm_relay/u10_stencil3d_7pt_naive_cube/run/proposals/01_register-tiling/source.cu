// unseen2/10_stencil3d_7pt_naive_cube: the basic 3-D seven-point stencil of PMPP 4th ed. ch. 8 on an
// N^3 grid, interior points only (out's boundary keeps its initial zeros).
// Register-tiled version (PMPP Fig. 8.12 style): a 32 x 8 block covers a (j, k) tile and marches along
// i through BZ planes. The i-1 / i / i+1 values of each thread's column live in registers
// (prev / cur / next: every input is loaded from global once per block, plus the tile halo), and the
// in-plane neighbours (k +- 1, j +- 1) are read from the current plane staged in shared memory.
// Launch: block (32, 8, 1), grid (ceil(N / 32), ceil(N / 8), ceil(N / BZ)).
#define C0 0.5f
#define C1 0.0833333f
#define C2 0.0833333f
#define C3 0.0833333f
#define C4 0.0833333f
#define C5 0.0833333f
#define C6 0.0833333f

#define BX 32
#define BY 8
#define BZ 32

extern "C" __global__ void __launch_bounds__(BX * BY) stencil_kernel(const float *in, float *out, unsigned int N)
{
    __shared__ float s[BY + 2][BX + 2];
    const int n = (int)N;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int k = blockIdx.x * BX + tx;
    const int j = blockIdx.y * BY + ty;
    const int i0 = blockIdx.z * BZ;
    const int ib = max(i0, 1);
    const int ie = min(i0 + BZ, n - 1); // outputs for i in [ib, ie)
    if (ib >= ie) return;               // block-uniform
    const size_t plane = (size_t)n * n;
    const bool inXY = (j < n) && (k < n);
    const size_t col = (size_t)j * n + k;

    float prev = 0.0f, cur = 0.0f, next = 0.0f;
    if (inXY) {
        prev = in[(size_t)(ib - 1) * plane + col];
        cur = in[(size_t)ib * plane + col];
    }
    const bool outXY = inXY && j >= 1 && j < n - 1 && k >= 1 && k < n - 1;

    for (int i = ib; i < ie; ++i) {
        const size_t base = (size_t)i * plane;
        if (inXY) next = in[base + plane + col]; // i + 1 <= n - 1
        __syncthreads(); // previous plane fully consumed
        s[ty + 1][tx + 1] = cur;
        if (tx == 0) s[ty + 1][0] = (j < n && k >= 1 && k - 1 < n) ? in[base + (size_t)j * n + (k - 1)] : 0.0f;
        if (tx == BX - 1) s[ty + 1][BX + 1] = (j < n && k + 1 < n) ? in[base + (size_t)j * n + (k + 1)] : 0.0f;
        if (ty == 0) s[0][tx + 1] = (k < n && j >= 1 && j - 1 < n) ? in[base + (size_t)(j - 1) * n + k] : 0.0f;
        if (ty == BY - 1) s[BY + 1][tx + 1] = (k < n && j + 1 < n) ? in[base + (size_t)(j + 1) * n + k] : 0.0f;
        __syncthreads();
        if (outXY)
            out[base + col] = C0 * cur
                            + C1 * s[ty + 1][tx]
                            + C2 * s[ty + 1][tx + 2]
                            + C3 * s[ty][tx + 1]
                            + C4 * s[ty + 2][tx + 1]
                            + C5 * prev
                            + C6 * next;
        prev = cur;
        cur = next;
    }
}
