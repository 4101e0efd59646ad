// unseen3/16_sddmm_coo_thread_per_nonzero / fix: the warp-per-nonzero SDDMM of google-research/sputnik
// (sputnik/sddmm/cuda_sddmm.cu; Apache-2.0) and DGL's SDDMMCooKernel (dmlc/dgl src/array/cuda/sddmm.cuh;
// Apache-2.0): the lanes of a warp split K (coalesced 128-byte row pieces), the partial products are
// butterfly-reduced with __shfl_xor_sync, lane 0 writes. Launch: block (32, 8), grid ceil(nnz / 8).
extern "C" __global__ void sddmm_coo_warp(const int *__restrict__ row_ind, const int *__restrict__ col_ind,
                                          const float *__restrict__ A, const float *__restrict__ B,
                                          float *__restrict__ out, int nnz, int K)
{
    int e = blockIdx.x * blockDim.y + threadIdx.y;
    if (e >= nnz) return;  // whole warps leave together
    const float *a = A + (long)row_ind[e] * K;
    const float *b = B + (long)col_ind[e] * K;
    float acc = 0.0f;
    for (int k = threadIdx.x; k < K; k += 32) acc += a[k] * b[k];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x == 0) out[e] = acc;
}
