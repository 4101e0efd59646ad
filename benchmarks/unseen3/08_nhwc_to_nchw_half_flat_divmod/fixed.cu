// unseen3/08_nhwc_to_nchw_half_flat_divmod / fix: per image, NHWC -> NCHW is a 2-D transpose of an
// [H*W, C] matrix into [C, H*W]; the tiled transpose of ONNX Runtime's Transpose3DKernel / M. Harris, "An
// Efficient Matrix Transpose in CUDA C/C++" (NVIDIA blog, 2013): a 32 x 33 shared tile, reads along C and
// writes along H*W, both coalesced; the image from blockIdx.z, no division per element.
// Launch: block (32, 8), grid (ceil(C / 32), ceil(H*W / 32), N).
#include <cuda_fp16.h>
#define TILE 32

extern "C" __global__ void transpose_nhwc_to_nchw_tiled(const __half *__restrict__ input_data,
                                                        __half *__restrict__ output_data, int N, int H, int W, int C)
{
    __shared__ __half tile[TILE][TILE + 1];
    int hw = H * W;
    const __half *in = input_data + (long long)blockIdx.z * hw * C;
    __half *out = output_data + (long long)blockIdx.z * hw * C;
    int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int p = blockIdx.y * TILE + j;
        if (c < C && p < hw) tile[j][threadIdx.x] = in[(long long)p * C + c];
    }
    __syncthreads();
    int p = blockIdx.y * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int cc = blockIdx.x * TILE + j;
        if (cc < C && p < hw) out[(long long)cc * hw + p] = tile[threadIdx.x][j];
    }
}
