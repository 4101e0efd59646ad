// unseen3/01_cumsum_rows_thread_per_row / fix: the innermost-dimension scan of PyTorch's CUDA cumsum
// (aten/src/ATen/native/cuda/ScanUtils.cuh, tensor_kernel_scan_innermost_dim, BSD-3) in its warp form:
// one warp per row walks the row in 32-element chunks (coalesced), scans each chunk with __shfl_up_sync
// (CUB WarpScanShfl) and carries the chunk total to the next chunk. Launch: block (32, 8), grid ceil(rows / 8).
extern "C" __global__ void cumsum_rows_warp(const float *__restrict__ x, float *__restrict__ y, int rows, int len)
{
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;  // the whole warp leaves together (blockDim.x == 32)
    int lane = threadIdx.x;
    const float *src = x + (long long)row * len;
    float *dst = y + (long long)row * len;
    float carry = 0.0f;
    for (int base = 0; base < len; base += 32) {
        int c = base + lane;
        float v = c < len ? src[c] : 0.0f;
        for (int o = 1; o < 32; o <<= 1) {
            float up = __shfl_up_sync(0xffffffffu, v, o);
            if (lane >= o) v += up;
        }
        if (c < len) dst[c] = carry + v;
        carry += __shfl_sync(0xffffffffu, v, 31);
    }
}
