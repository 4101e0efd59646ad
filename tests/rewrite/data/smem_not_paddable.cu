// Shared arrays the smem-padding recipe must leave alone, each for a stated reason.
#define N 32

__global__ void not_paddable(float *out, const double *in)
{
    __shared__ double d[N][N];        // 8-byte elements
    __shared__ float odd[16][24];     // last dimension not a multiple of 32
    __shared__ float flat[N][N];      // used as a row pointer below
    __shared__ float sized[N][N];     // used in sizeof below
    const int tx = threadIdx.x, ty = threadIdx.y;
    d[ty][tx] = in[ty * N + tx];
    odd[ty % 16][tx % 24] = 1.0f;
    float *row = flat[ty];
    row[tx] = (float)d[tx][ty];
    sized[ty][tx] = (float)sizeof(sized);
    __syncthreads();
    out[ty * N + tx] = flat[tx][ty] + odd[ty % 16][tx % 24] + sized[tx][ty];
}
