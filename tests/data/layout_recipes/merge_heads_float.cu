// Own slow form for permute-rows: [N, H, S, D] -> [N, S, H, D] ("merge heads"), one float per thread,
// the output's flat index peeled with % and /, the read index re-flattened.
extern "C" __global__ void merge_heads(const float *x, float *y, long long total, int S, int H, int D)
{
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= total) return;
    long long d = o % D;
    long long t = o / D;
    long long h = t % H;
    t /= H;
    long long s = t % S;
    long long n = t / S;
    y[o] = x[d + ((n * H + h) * S + s) * D];
}
