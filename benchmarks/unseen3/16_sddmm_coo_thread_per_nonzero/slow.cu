// unseen3/16_sddmm_coo_thread_per_nonzero / slow: sampled dense-dense matrix multiplication (SDDMM) on a COO
// pattern, out[e] = <A[row[e], :], B[col[e], :]> (the edge scores of graph attention), as defined by
// I. Nisa et al., "Sampled Dense Matrix Multiplication for High-Performance Machine Learning" (HiPC 2018),
// Alg. 1, one GPU thread per nonzero: each thread walks two K-float rows serially, so lanes read rows of
// random nodes 256 bytes apart (every load its own line; 64 dependent loads per thread).
extern "C" __global__ void sddmm_coo_thread(const int *row_ind, const int *col_ind, const float *A, const float *B,
                                            float *out, int nnz, int K)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    const float *a = A + (long)row_ind[e] * K;
    const float *b = B + (long)col_ind[e] * K;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += a[k] * b[k];
    out[e] = acc;
}
