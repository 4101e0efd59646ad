// unseen3/18_gbdt_feature_histograms_global_atomics / slow: gradient-boosting histogram construction, for every
// feature f and row r: hist[f][bin[r][f]] += (grad[r], hess[r]) (microsoft/LightGBM, src/io/dense_bin.hpp
// DenseBin::ConstructHistogram, the CPU loop; MIT), moved to the GPU as one thread per row looping over
// its 28 features with two global float atomicAdds each: 28 * 64 bins * 2 = 3584 counters, hot in L2.
extern "C" __global__ void construct_histogram_rows(const unsigned char *bins, const float *grad, const float *hess,
                                                    float *hist, int num_data, int num_features, int num_bins)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= num_data) return;
    const float g = grad[r], h = hess[r];
    for (int f = 0; f < num_features; ++f) {
        const int bin = bins[(size_t)r * num_features + f];
        float *slot = hist + ((size_t)f * num_bins + bin) * 2;
        atomicAdd(slot, g);
        atomicAdd(slot + 1, h);
    }
}
