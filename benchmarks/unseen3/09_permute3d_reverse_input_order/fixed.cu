// unseen3/09_permute3d_reverse_input_order / fix: cuTT's tiled method for a permutation that swaps the first
// and last dimensions (and M. Harris's 32 x 33 tile): for each b, the (a, c) plane is transposed through
// shared memory so that reads run along c and writes along a, both coalesced.
// Launch: block (32, 8), grid (ceil(C / 32), ceil(A / 32), B).
#define TILE 32

extern "C" __global__ void permute210_tiled(const double *__restrict__ in, double *__restrict__ out, int A, int B,
                                            int C)
{
    __shared__ double tile[TILE][TILE + 1];
    int b = blockIdx.z;
    int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int a = blockIdx.y * TILE + j;
        if (a < A && c < C) tile[j][threadIdx.x] = in[((long)a * B + b) * C + c];
    }
    __syncthreads();
    int a = blockIdx.y * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int cc = blockIdx.x * TILE + j;
        if (a < A && cc < C) out[((long)cc * B + b) * A + a] = tile[threadIdx.x][j];
    }
}
