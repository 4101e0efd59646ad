// unseen2/05_rowsum_contiguous_chunk / slow: per-row sums (torch.sum(x, dim=-1)), one block per row;
// each thread first sums its own contiguous chunk of ceil(cols / BLOCK) elements, then a shared-memory
// tree combines the partials. The per-thread chunk puts the lanes of a warp `chunk` floats apart on every
// load (the uncoalesced layout that PMPP 4th ed. ch. 10.7 "thread coarsening" and the Best Practices
// Guide's "Coalesced Access to Global Memory" contrast with a blockDim-strided loop).
// Launch: block BLOCK (256), grid rows.
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void row_sums_chunked(const float *x, float *out, int cols)
{
    __shared__ float partial[BLOCK];
    const float *row = x + (size_t)blockIdx.x * cols;
    int chunk = (cols + BLOCK - 1) / BLOCK;
    int begin = threadIdx.x * chunk;
    int end = min(begin + chunk, cols);
    float s = 0.0f;
    for (int k = begin; k < end; ++k)
        s += row[k];
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}
