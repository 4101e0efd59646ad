// 2-D scale-and-bias whose thread map walks rows: the x index (fastest-varying across a warp) picks the ROW,
// the y index the column, so a warp's 32 accesses are `cols` floats apart. The access pattern discussed in
// NVIDIA's "How to Access Global Memory Efficiently in CUDA C/C++ Kernels" (Mark Harris, 2013); the kernel
// is the common per-pixel affine transform (cf. OpenCV cv::cuda::multiply/add with scalars).
extern "C" __global__ void scale_bias_2d(const float* src, float* dst, int rows, int cols, float alpha, float beta)
{
    unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        size_t idx = (size_t)r * cols + c;
        dst[idx] = alpha * src[idx] + beta;
    }
}
