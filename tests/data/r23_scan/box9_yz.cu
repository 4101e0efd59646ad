// Nine points of the y-z box at each x (a 27-point stencil's x = 0 slice), weights in memory, a
// cube of side N, unsigned indices, one point per thread on 8 x 8 x 8 blocks.
extern "C" __global__ void box9(const float *in, const float *w, float *out, unsigned int N)
{
    unsigned int i = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i + 1 < N && j >= 1 && j + 1 < N && k < N) {
        float s = w[0] * in[(i - 1) * N * N + (j - 1) * N + k] + w[1] * in[(i - 1) * N * N + j * N + k]
                + w[2] * in[(i - 1) * N * N + (j + 1) * N + k];
        s += w[3] * in[i * N * N + (j - 1) * N + k] + w[4] * in[i * N * N + j * N + k]
           + w[5] * in[i * N * N + (j + 1) * N + k];
        s += w[6] * in[(i + 1) * N * N + (j - 1) * N + k] + w[7] * in[(i + 1) * N * N + j * N + k]
           + w[8] * in[(i + 1) * N * N + (j + 1) * N + k];
        out[i * N * N + j * N + k] = s;
    }
}
