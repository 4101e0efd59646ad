// unseen3/02_scan_sections_thread0_serial / fix: the block-wide scan of CUB's BlockScan (BLOCK_SCAN_WARP_SCANS,
// NVIDIA/cccl cub/block/specializations/block_scan_warp_scans.cuh, BSD-3) as a raking, warp-synchronous
// scan: each thread scans 4 consecutive elements in registers, the warps scan the thread totals with
// __shfl_up_sync, warp 0 scans the 8 warp totals, and every thread adds its prefix. Same launch.
#define SECTION 1024
#define THREADS 256
#define WARPS (THREADS / 32)

extern "C" __global__ void scan_sections_warp(const int *__restrict__ in, int *__restrict__ out,
                                              int *__restrict__ block_sums, int n)
{
    __shared__ int cache[SECTION];
    __shared__ int warp_total[WARPS];
    int start = blockIdx.x * SECTION;
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (int i = t; i < SECTION; i += THREADS)
        cache[i] = (start + i < n) ? in[start + i] : 0;
    __syncthreads();
    int a0 = cache[4 * t];
    int a1 = a0 + cache[4 * t + 1];
    int a2 = a1 + cache[4 * t + 2];
    int a3 = a2 + cache[4 * t + 3];
    int v = a3;
    for (int o = 1; o < 32; o <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += up;
    }
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < WARPS ? warp_total[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            int up = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += up;
        }
        if (lane < WARPS) warp_total[lane] = w;
    }
    __syncthreads();
    int prefix = v - a3 + (warp > 0 ? warp_total[warp - 1] : 0);
    cache[4 * t] = prefix + a0;
    cache[4 * t + 1] = prefix + a1;
    cache[4 * t + 2] = prefix + a2;
    cache[4 * t + 3] = prefix + a3;
    __syncthreads();
    for (int i = t; i < SECTION; i += THREADS)
        if (start + i < n) out[start + i] = cache[i];
    if (t == 0) block_sums[blockIdx.x] = warp_total[WARPS - 1];
}
