// unseen/16_double_sigmoid_chunked / fixed: the same CHUNK elements per thread and the same block
// tile of blockDim.x * CHUNK elements, visited in interleaved order (`tile + k * blockDim.x + tid`):
// at each step a warp reads 32 consecutive doubles (two 128-byte lines). A drop-in under the same
// launch (no [variants] entry); identical arithmetic.
#ifndef CHUNK
#define CHUNK 16
#endif

extern "C" __global__ void dsigmoid_interleaved(const double *in, double *out, long long n)
{
    const long long tile = (long long)blockIdx.x * blockDim.x * CHUNK;
    for (int k = 0; k < CHUNK; ++k) {
        const long long idx = tile + (long long)k * blockDim.x + threadIdx.x;
        if (idx < n)
            out[idx] = 1.0 / (1.0 + exp(-in[idx]));
    }
}
