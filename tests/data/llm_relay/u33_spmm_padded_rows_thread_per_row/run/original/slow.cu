// unseen2/33_spmm_padded_rows_thread_per_row / slow: sparse x dense product C = A B (A sparse
// rows x K in padded row-major storage with per-row lengths, B dense K x N row-major), one thread
// per sparse row computing the whole output row: the row-per-thread SpMM that a GNN
// aggregation (sum over neighbours of their feature rows) is first written as, cf. the
// sequential CSR SpMM of Yang, Buluc & Owens, "Design Principles for Sparse Matrix
// Multiplication on the GPU" (Euro-Par 2018, Alg. 1). Lanes read B rows and write C rows
// 4*N bytes apart and read A rows 4*max_nnz bytes apart: uncoalesced.
// Launch: block 128, grid ceil(rows / 128).
extern "C" __global__ void spmm_rows_thread(int rows, int N, int max_nnz, const int *__restrict__ row_len,
                                            const int *__restrict__ col_idx, const float *__restrict__ values,
                                            const float *__restrict__ B, float *__restrict__ C)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const long long a = (long long)row * max_nnz;
    const int len = row_len[row];
    for (int n = 0; n < N; ++n) {
        float acc = 0.0f;
        for (int j = 0; j < len; ++j)
            acc += values[a + j] * B[(long long)col_idx[a + j] * N + n];
        C[(long long)row * N + n] = acc;
    }
}
