// Saturating add of two 8-bit images, one byte per thread: the per-pixel functor form of OpenCV's
// cv::cuda::add for CV_8U (saturate_cast<uchar>(a + b)) and of NPP's nppiAdd_8u_C1RSfs with scale 0.
// Each warp moves 32 bytes per access: a quarter of a 128-byte line per instruction.
extern "C" __global__ void add_sat_u8(const unsigned char* a, const unsigned char* b, unsigned char* out, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        int s = a[idx] + b[idx];
        out[idx] = s > 255 ? 255 : (unsigned char)s;
    }
}
