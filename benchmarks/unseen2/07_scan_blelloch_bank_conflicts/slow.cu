// unseen2/07_scan_blelloch_bank_conflicts / slow: exclusive prefix sums of independent 2048-element
// sections with the work-efficient (Blelloch) up-sweep / down-sweep tree of M. Harris, S. Sengupta and
// J. D. Owens, "Parallel Prefix Sum (Scan) with CUDA", GPU Gems 3 ch. 39, Example 39-2: indices
// offset*(2*thid+1)-1 put the active threads of a level 2, 4, ... 32 shared-memory words apart, so the
// deep levels of both sweeps are up to 32-way bank conflicted.
// Launch: block SECTION / 2 (1024), grid ceil(n / SECTION).
#define SECTION 2048

extern "C" __global__ void prescan(float *g_odata, const float *g_idata, int n)
{
    __shared__ float temp[SECTION];
    int thid = threadIdx.x;
    int base = blockIdx.x * SECTION;
    int offset = 1;
    temp[2 * thid] = base + 2 * thid < n ? g_idata[base + 2 * thid] : 0.0f;
    temp[2 * thid + 1] = base + 2 * thid + 1 < n ? g_idata[base + 2 * thid + 1] : 0.0f;
    for (int d = SECTION >> 1; d > 0; d >>= 1) {  // up-sweep (reduce)
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (thid == 0) temp[SECTION - 1] = 0.0f;
    for (int d = 1; d < SECTION; d *= 2) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    if (base + 2 * thid < n) g_odata[base + 2 * thid] = temp[2 * thid];
    if (base + 2 * thid + 1 < n) g_odata[base + 2 * thid + 1] = temp[2 * thid + 1];
}
