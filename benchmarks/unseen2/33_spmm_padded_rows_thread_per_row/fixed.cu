// unseen2/33_spmm_padded_rows_thread_per_row / fixed: row-split SpMM with coalesced B access
// (Yang, Buluc & Owens, Euro-Par 2018, Alg. 2 "row split"; the layout of cuSPARSE csrmm2 and of
// GE-SpMM, Huang et al. SC'20): a warp covers 32 consecutive output columns of one sparse row,
// every lane walks the row's nonzeros (broadcast loads of values/indices) and reads one element
// of each B row, neighbouring lanes neighbouring addresses. Same j order per output: identical.
// Launch: block (32, ROWS), grid (ceil(N / 32), ceil(rows / ROWS)).
#ifndef ROWS
#define ROWS 8
#endif

extern "C" __global__ void spmm_row_split(int rows, int N, int max_nnz, const int *__restrict__ row_len,
                                          const int *__restrict__ col_idx, const float *__restrict__ values,
                                          const float *__restrict__ B, float *__restrict__ C)
{
    const int n = blockIdx.x * 32 + threadIdx.x;
    const int row = blockIdx.y * ROWS + threadIdx.y;
    if (row >= rows || n >= N)
        return;
    const long long a = (long long)row * max_nnz;
    const int len = row_len[row];
    float acc = 0.0f;
    for (int j = 0; j < len; ++j)
        acc += values[a + j] * B[(long long)col_idx[a + j] * N + n];
    C[(long long)row * N + n] = acc;
}
