// unseen2/32_spmv_padded_rows_thread_per_row / fixed: one warp per row, lanes stride the row's
// nonzeros (coalesced loads of values and indices), shuffle reduction: the "CSR vector" kernel
// of Bell & Garland (NVIDIA NVR-2008-004, `spmv_csr_vector_kernel`, with __shfl_down_sync in
// place of the volatile shared-memory reduction).
// Launch: block (32, WARPS), grid ceil(rows / WARPS).
#ifndef WARPS
#define WARPS 8
#endif

extern "C" __global__ void spmv_rows_vector(int rows, int max_nnz, const int *row_len, const int *col_idx,
                                            const float *values, const float *x, float *y)
{
    const int row = blockIdx.x * WARPS + threadIdx.y;
    const int lane = threadIdx.x;
    if (row >= rows)
        return;
    const long base = (long)row * max_nnz;
    const int len = row_len[row];
    float dot = 0.0f;
    for (int j = lane; j < len; j += 32)
        dot += values[base + j] * x[col_idx[base + j]];
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_down_sync(0xffffffffu, dot, off);
    if (lane == 0)
        y[row] = dot;
}
