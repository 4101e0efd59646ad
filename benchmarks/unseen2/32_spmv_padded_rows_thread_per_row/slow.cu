// unseen2/32_spmv_padded_rows_thread_per_row / slow: sparse matrix-vector product y = A x with A
// stored as rows of padded capacity (ELLPACK-R: per-row length `row_len`, values and column
// indices row-major [rows x max_nnz]; Vazquez, Fernandez & Garzon, J. Supercomputing 2011), one
// thread per row walking its nonzeros: the "CSR scalar" kernel of Bell & Garland, "Efficient
// Sparse Matrix-Vector Multiplication on CUDA" (NVIDIA NVR-2008-004; PMPP 4th ed. ch. 14
// `spmv_csr_kernel`) on this layout. Lanes read rows 4*max_nnz bytes apart: uncoalesced;
// row lengths differ, so lanes idle (divergence).
// Launch: block 128, grid ceil(rows / 128).
extern "C" __global__ void spmv_rows_scalar(int rows, int max_nnz, const int *row_len, const int *col_idx,
                                            const float *values, const float *x, float *y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        const long base = (long)row * max_nnz;
        for (int j = 0; j < row_len[row]; j++)
            dot += values[base + j] * x[col_idx[base + j]];
        y[row] = dot;
    }
}
