// Own slow form for transpose-inplace: each thread below the diagonal swaps m[r][c] and m[c][r]
// through two temporaries; the mirrored access of a warp is a column (32 sectors per request).
extern "C" __global__ void flip_lower(float *m, int side)
{
    const int c = threadIdx.x + blockDim.x * blockIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < r && r < side) {
        float low = m[(size_t)r * side + c];
        float high = m[(size_t)c * side + r];
        m[(size_t)c * side + r] = low;
        m[(size_t)r * side + c] = high;
    }
}
