// unseen/17_nchw_to_nhwc_transposed_write / slow: layout permute NCHW -> NHWC (a batched transpose
// of each image's C x HW plane). threadIdx.x walks hw, so reads are coalesced, but the write
// index is (img * HW + hw) * C + ch: consecutive lanes store C floats apart (one 32-byte sector
// per lane, 4 bytes used). The transposeNaive pattern, in the shape of a tensor-layout kernel.
// Launch: block 256, grid (ceil(HW / 256), C, N).
extern "C" __global__ void nchw_to_nhwc_naive(const float *src, float *dst, int C, int HW)
{
    const int hw = blockIdx.x * blockDim.x + threadIdx.x;
    const int ch = blockIdx.y;
    const int img = blockIdx.z;
    if (hw < HW)
        dst[((size_t)img * HW + hw) * C + ch] = src[((size_t)img * C + ch) * HW + hw];
}
