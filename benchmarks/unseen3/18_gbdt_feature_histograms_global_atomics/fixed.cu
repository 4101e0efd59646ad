// unseen3/18_gbdt_feature_histograms_global_atomics / fix: LightGBM's CUDA tree learner layout
// (src/treelearner/cuda/cuda_histogram_constructor.cu, CUDAConstructHistogramDenseKernel; MIT): each block
// builds a private histogram of all features in shared memory (28 * 64 * 2 floats = 14 KiB) from a
// grid-stride range of rows, reading the [rows, features] bin matrix as one contiguous stream (coalesced),
// then adds its non-zero counters to the global histogram. Launch: 256 threads, 264 blocks.
#define MAX_SLOTS 4096

extern "C" __global__ void construct_histogram_shared(const unsigned char *__restrict__ bins,
                                                      const float *__restrict__ grad, const float *__restrict__ hess,
                                                      float *__restrict__ hist, int num_data, int num_features,
                                                      int num_bins)
{
    __shared__ float local[MAX_SLOTS];
    const int slots = num_features * num_bins * 2;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) local[s] = 0.0f;
    __syncthreads();
    const size_t total = (size_t)num_data * num_features;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < total; k += stride) {
        const int r = (int)(k / num_features), f = (int)(k % num_features);
        float *slot = local + (f * num_bins + bins[k]) * 2;
        atomicAdd(slot, grad[r]);
        atomicAdd(slot + 1, hess[r]);
    }
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        if (local[s] != 0.0f) atomicAdd(&hist[s], local[s]);
    }
}
