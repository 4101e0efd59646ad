// unseen2/14_shuffle3_template_simple / fixed: the tiled path TF takes for this permutation
// (SwapDimension1And2InTensor3UsingTiles in tensorflow/core/kernels/conv_2d_gpu.h): per batch, a
// 32 x 32 tile of the d1 x d2 plane is read along d2 into shared memory (one padding column) and
// written along d1, so both global accesses are coalesced. Bit-identical (pure data movement).
// Launch: block (32, 8), grid (ceil(d2 / 32), ceil(d1 / 32), d0); entry swap_dims12_tiled<double>.
#define TILE 32
#define ROWS 8

template <typename T>
__global__ void swap_dims12_tiled(int nthreads, const T *__restrict__ input, int d0, int d1, int d2,
                                  T *__restrict__ output)
{
    __shared__ T tile[TILE][TILE + 1];
    const int b = blockIdx.z;
    const int j0 = blockIdx.y * TILE;  // along d1
    const int k0 = blockIdx.x * TILE;  // along d2
    const T *in = input + (size_t)b * d1 * d2;
    T *out = output + (size_t)b * d2 * d1;
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const int j = j0 + r, k = k0 + threadIdx.x;
        if (j < d1 && k < d2) tile[r][threadIdx.x] = in[(size_t)j * d2 + k];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const int k = k0 + r, j = j0 + threadIdx.x;
        if (j < d1 && k < d2) out[(size_t)k * d1 + j] = tile[threadIdx.x][r];
    }
}

template __global__ void swap_dims12_tiled<double>(int, const double *__restrict__, int, int, int,
                                                   double *__restrict__);
