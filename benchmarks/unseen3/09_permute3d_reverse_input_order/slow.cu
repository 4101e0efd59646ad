// unseen3/09_permute3d_reverse_input_order / slow: the rank-3 (2, 1, 0) permutation out[c][b][a] = in[a][b][c]
// in the "trivial" one-thread-per-input-element form that cuTT's paper measures its tiled kernels against
// (A.-P. Hynninen, D. I. Lyakh, "cuTT: A High-Performance Tensor Transpose Library for CUDA Compatible
// GPUs", arXiv:1705.01598, 2017; ap-hynninen/cutt, MIT): a 3-D grid follows the input, reads are
// coalesced along c, and each lane's store lands A*B doubles away from its neighbour's.
extern "C" __global__ void permute210_naive(const double *in, double *out, int A, int B, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    int a = blockIdx.z;
    if (c < C) out[((long)c * B + b) * A + a] = in[((long)a * B + b) * C + c];
}
