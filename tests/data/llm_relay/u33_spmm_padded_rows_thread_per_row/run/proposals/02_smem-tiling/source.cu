// unseen2/33_spmm_padded_rows_thread_per_row: sparse x dense product C = A B (A sparse rows x K in
// padded row-major storage with per-row lengths, B dense K x N row-major).
// Shared-memory tiled version: a block of 256 threads handles RPB = 8 consecutive sparse rows. Their
// padded (col_idx, values) rows form one contiguous 8 * max_nnz region, which the block stages in
// (dynamic) shared memory with fully coalesced loads. Then warp w computes row w of the tile: lanes run
// along the output columns (two columns per lane per 64-column pass), reading (col, value) pairs from
// shared memory as broadcasts, each B row as a contiguous 4*N-byte segment and writing each C row
// contiguously. The per-output summation order over j is unchanged.
// Launch: block 256, grid ceil(rows / 8), dynamic shared memory 8 * max_nnz * 8 bytes.
#define RPB 8

extern "C" __global__ void __launch_bounds__(256) spmm_rows_thread(int rows, int N, int max_nnz, const int *__restrict__ row_len,
                                            const int *__restrict__ col_idx, const float *__restrict__ values,
                                            const float *__restrict__ B, float *__restrict__ C)
{
    extern __shared__ int smem[];
    int *s_col = smem;                                            // [RPB][max_nnz]
    float *s_val = reinterpret_cast<float *>(smem + RPB * max_nnz); // [RPB][max_nnz]

    const long long row0 = (long long)blockIdx.x * RPB;
    const int nrows = (int)min((long long)RPB, (long long)rows - row0);
    if (nrows <= 0) return; // block-uniform

    // stage the block's contiguous padded A rows (coalesced)
    const long long abase = row0 * max_nnz;
    const int tile = nrows * max_nnz;
    for (int e = threadIdx.x; e < tile; e += blockDim.x) {
        s_col[e] = __ldg(col_idx + abase + e);
        s_val[e] = __ldg(values + abase + e);
    }
    __syncthreads();

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (warp >= nrows) return; // no further block-wide sync below
    const long long row = row0 + warp;
    const int len = __ldg(row_len + row);
    const int *wc = s_col + warp * max_nnz;
    const float *wv = s_val + warp * max_nnz;
    float *crow = C + row * N;

    for (int n0 = 0; n0 < N; n0 += 64) {
        const int n1 = n0 + lane, n2 = n0 + 32 + lane;
        const bool ok1 = n1 < N, ok2 = n2 < N;
        float acc1 = 0.0f, acc2 = 0.0f;
#pragma unroll 4
        for (int j = 0; j < len; ++j) {
            const int c = wc[j];
            const float v = wv[j];
            const float *brow = B + (long long)c * N;
            if (ok1) acc1 += v * __ldg(brow + n1);
            if (ok2) acc2 += v * __ldg(brow + n2);
        }
        if (ok1) crow[n1] = acc1;
        if (ok2) crow[n2] = acc2;
    }
}
