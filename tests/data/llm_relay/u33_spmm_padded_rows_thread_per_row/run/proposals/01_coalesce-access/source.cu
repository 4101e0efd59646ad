// unseen2/33_spmm_padded_rows_thread_per_row: sparse x dense product C = A B (A sparse rows x K in
// padded row-major storage with per-row lengths, B dense K x N row-major).
// Coalesced version: one warp per sparse row. The warp loads up to 32 (col_idx, value) pairs of its
// row with one contiguous load each and broadcasts them with __shfl_sync; the lanes run along the
// output columns, so every B row is read as a contiguous 4*N-byte segment and every C row is written
// contiguously. Each lane keeps two output columns (n0 + lane, n0 + 32 + lane) per 64-column pass.
// The per-output summation order over j is unchanged.
// Launch: block 256 (8 rows per block), grid ceil(rows / 8).
#define FULL_MASK 0xffffffffu

extern "C" __global__ void __launch_bounds__(256) spmm_rows_thread(int rows, int N, int max_nnz, const int *__restrict__ row_len,
                                            const int *__restrict__ col_idx, const float *__restrict__ values,
                                            const float *__restrict__ B, float *__restrict__ C)
{
    const int lane = threadIdx.x & 31;
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= rows)
        return; // warp-uniform
    const long long a = row * max_nnz;
    const int len = row_len[row];
    float *crow = C + row * N;

    for (int n0 = 0; n0 < N; n0 += 64) {
        const int n1 = n0 + lane, n2 = n0 + 32 + lane;
        const bool ok1 = n1 < N, ok2 = n2 < N;
        float acc1 = 0.0f, acc2 = 0.0f;
        for (int j0 = 0; j0 < len; j0 += 32) {
            const int cnt = min(32, len - j0);
            int myc = 0;
            float myv = 0.0f;
            if (lane < cnt) {
                myc = __ldg(col_idx + a + j0 + lane);
                myv = __ldg(values + a + j0 + lane);
            }
#pragma unroll 4
            for (int jj = 0; jj < cnt; ++jj) {
                const int c = __shfl_sync(FULL_MASK, myc, jj);
                const float v = __shfl_sync(FULL_MASK, myv, jj);
                const float *brow = B + (long long)c * N;
                if (ok1) acc1 += v * __ldg(brow + n1);
                if (ok2) acc2 += v * __ldg(brow + n2);
            }
        }
        if (ok1) crow[n1] = acc1;
        if (ok2) crow[n2] = acc2;
    }
}
