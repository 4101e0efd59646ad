// unseen2/17_transpose_inplace_square / slow: in-place transpose of a square fp32 matrix, one thread per
// element of the upper triangle swapping a[row][col] with a[col][row] (the usual first answer to
// "transpose a square matrix in place in CUDA" on Q&A sites and forums). Half of the
// threads idle, and the mirrored load and store of every warp are n floats apart (32 sectors each).
// Launch: block (32, 8), grid (ceil(n / 32), ceil(n / 8)).
extern "C" __global__ void transpose_inplace_naive(float *a, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n && col > row) {
        float t = a[row * n + col];
        a[row * n + col] = a[col * n + row];
        a[col * n + row] = t;
    }
}
