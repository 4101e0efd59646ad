// unseen2/13_scatter_add_edge_per_thread / fixed: the COO SpMM layout of DGL (dmlc/dgl
// src/array/cuda/spmm.cuh, SpMMCooKernel): edges over threadIdx.y / blockIdx.x, features over
// threadIdx.x, so one warp gathers and atomically adds 32 consecutive features of one edge (128-byte
// coalesced loads and reductions). Launch: block (32, 8), grid ceil(num_edges / 8) (spec variant);
// agg must start at zero.
extern "C" __global__ void scatter_add_edges_coalesced(const float *__restrict__ feat,
                                                       const int *__restrict__ edge_src,
                                                       const int *__restrict__ edge_dst, float *agg,
                                                       int num_edges, int F)
{
    const int e = blockIdx.x * blockDim.y + threadIdx.y;
    if (e >= num_edges) return;
    const size_t s = (size_t)edge_src[e] * F;
    const size_t d = (size_t)edge_dst[e] * F;
    for (int f = threadIdx.x; f < F; f += blockDim.x)
        atomicAdd(&agg[d + f], feat[s + f]);
}
