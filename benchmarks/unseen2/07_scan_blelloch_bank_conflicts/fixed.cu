// unseen2/07_scan_blelloch_bank_conflicts / fixed: GPU Gems 3 ch. 39, Example 39-3 -- the same tree with
// every shared-memory index padded by CONFLICT_FREE_OFFSET(i) = i / NUM_BANKS (one spare word per 32),
// and the section loaded as two coalesced halves (thid, thid + SECTION/2). The additions and their order
// are unchanged, so the result is bit-identical. Same launch as the slow kernel.
#define SECTION 2048
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)

extern "C" __global__ void prescan_padded(float *g_odata, const float *g_idata, int n)
{
    __shared__ float temp[SECTION + (SECTION >> LOG_NUM_BANKS)];
    int thid = threadIdx.x;
    int base = blockIdx.x * SECTION;
    int offset = 1;
    int ai = thid;
    int bi = thid + SECTION / 2;
    int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
    int bankOffsetB = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bankOffsetA] = base + ai < n ? g_idata[base + ai] : 0.0f;
    temp[bi + bankOffsetB] = base + bi < n ? g_idata[base + bi] : 0.0f;
    for (int d = SECTION >> 1; d > 0; d >>= 1) {  // up-sweep (reduce)
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0) temp[SECTION - 1 + CONFLICT_FREE_OFFSET(SECTION - 1)] = 0.0f;
    for (int d = 1; d < SECTION; d *= 2) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    if (base + ai < n) g_odata[base + ai] = temp[ai + bankOffsetA];
    if (base + bi < n) g_odata[base + bi] = temp[bi + bankOffsetB];
}
