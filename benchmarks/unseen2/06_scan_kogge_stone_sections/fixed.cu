// unseen2/06_scan_kogge_stone_sections / fixed: the same section scan built from warp shuffles (the
// warp-scan-then-scan-the-warp-totals scheme of CUB's BlockScan (WARP_SCANS) and of NVIDIA/cuda-samples
// `shfl_scan`): each warp scans its 32 values in registers with __shfl_up_sync, warp totals go through
// shared memory once, warp 0 scans them, and every thread adds its warp's offset. Two barriers in all.
// Launch: block SECTION_SIZE, grid ceil(N / SECTION_SIZE) (same as the slow kernel).
#define SECTION_SIZE 1024
#define WARP 32

extern "C" __global__ void warp_shuffle_scan(const int *__restrict__ X, int *__restrict__ Y, unsigned int N)
{
    __shared__ int warp_totals[SECTION_SIZE / WARP];
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % WARP, wid = threadIdx.x / WARP;
    int v = i < N ? X[i] : 0;
#pragma unroll
    for (int d = 1; d < WARP; d *= 2) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (lane == WARP - 1) warp_totals[wid] = v;
    __syncthreads();
    if (wid == 0) {
        int t = lane < SECTION_SIZE / WARP ? warp_totals[lane] : 0;
#pragma unroll
        for (int d = 1; d < WARP; d *= 2) {
            int up = __shfl_up_sync(0xffffffffu, t, d);
            if (lane >= d) t += up;
        }
        if (lane < SECTION_SIZE / WARP) warp_totals[lane] = t;
    }
    __syncthreads();
    if (wid > 0) v += warp_totals[wid - 1];
    if (i < N) Y[i] = v;
}
