// unseen/16_double_sigmoid_chunked / slow: out = 1 / (1 + exp(-in)) in double precision, where each
// thread handles a CONTIGUOUS chunk of CHUNK elements (`first = gid * CHUNK; first + k`). At each
// step k the 32 lanes of a warp access 32 addresses CHUNK * 8 = 128 bytes apart: 32 different
// cache lines per request, 8 of 128 bytes used per line per request. The usual hand-coarsened
// loop written in the "per-thread block" order instead of the interleaved one.
// Launch: block 256, grid ceil(n / (256 * CHUNK)).
#ifndef CHUNK
#define CHUNK 16
#endif

extern "C" __global__ void dsigmoid_chunked(const double *in, double *out, long long n)
{
    const long long first = ((long long)blockIdx.x * blockDim.x * (CHUNK) + threadIdx.x);
    for (int k = 0; k < CHUNK; ++k) {
        const long long idx = first + (long long)k * blockDim.x;
        if (idx < n)
            out[idx] = 1.0 / (1.0 + exp(-in[idx]));
    }
}
