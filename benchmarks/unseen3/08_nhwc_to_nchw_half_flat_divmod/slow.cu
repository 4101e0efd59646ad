// unseen3/08_nhwc_to_nchw_half_flat_divmod / slow: the generic N-D transpose of ONNX Runtime's CUDA provider
// (microsoft/onnxruntime, onnxruntime/core/providers/cuda/tensor/transpose_impl.cu, TransposeKernel; MIT) for
// a rank-4 fp16 NHWC -> NCHW permutation (perm 0, 3, 1, 2): one thread per output element peels its
// coordinates off the flat index with a division and a modulo per dimension and reads the input through
// its strides. Lanes read 2-byte values C elements apart (every load its own sector).
#include <cuda_fp16.h>

extern "C" __global__ void transpose_nhwc_to_nchw(const __half *input_data, __half *output_data, int N, int H, int W,
                                                  int C)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= N * C * H * W) return;
    int remain = id;
    int w = remain % W;
    remain /= W;
    int h = remain % H;
    remain /= H;
    int c = remain % C;
    int n = remain / C;
    int input_index = ((n * H + h) * W + w) * C + c;
    output_data[id] = input_data[input_index];
}
