// unseen3/02_scan_sections_thread0_serial / slow: the first pass of a multi-pass (scan-then-propagate)
// prefix sum: each block scans one 1024-element section and writes the section's total for the next pass
// (D. Merrill, M. Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVR-2016-002,
// section 2, the reduce/scan passes). The section scan is done the way the naive answers to
// srush/GPU-Puzzles Puzzle 12 "Prefix Sum" (MIT) do it: the block stages the section in shared memory
// and thread 0 walks it serially while 255 threads wait at the barrier.
#define SECTION 1024

extern "C" __global__ void scan_sections_serial(const int *in, int *out, int *block_sums, int n)
{
    __shared__ int cache[SECTION];
    int start = blockIdx.x * SECTION;
    for (int i = threadIdx.x; i < SECTION; i += blockDim.x)
        cache[i] = (start + i < n) ? in[start + i] : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < SECTION; i++)
            cache[i] += cache[i - 1];
        block_sums[blockIdx.x] = cache[SECTION - 1];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < SECTION; i += blockDim.x)
        if (start + i < n) out[start + i] = cache[i];
}
