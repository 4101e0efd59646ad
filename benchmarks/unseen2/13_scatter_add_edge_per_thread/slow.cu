// unseen2/13_scatter_add_edge_per_thread / slow: GNN sum aggregation over a COO edge list
// (agg[dst[e], :] += feat[src[e], :], i.e. DGL's copy_u + sum / PyG's scatter_add of gathered messages),
// one thread per edge looping over the F features: a gather and an atomic scatter whose 32 lanes touch
// 32 different rows on every iteration (32 sectors per warp access, nothing coalesced).
// Launch: block 256, grid ceil(num_edges / 256); agg must start at zero.
extern "C" __global__ void scatter_add_edges(const float *feat, const int *edge_src, const int *edge_dst,
                                             float *agg, int num_edges, int F)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < num_edges) {
        int s = edge_src[e];
        int d = edge_dst[e];
        for (int f = 0; f < F; ++f)
            atomicAdd(&agg[(size_t)d * F + f], feat[(size_t)s * F + f]);
    }
}
