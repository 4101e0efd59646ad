// unseen/17_nchw_to_nhwc_transposed_write / fixed: per image, a 32 x 32 tile of the C x HW plane is
// staged in shared memory (padded by one column against bank conflicts) so that both the read
// (along hw) and the write (along ch) are coalesced: Harris's "Efficient Matrix Transpose" scheme.
// Launch: block (32, 8), grid (ceil(HW / 32), ceil(C / 32), N)  (spec: [variants."fixed.cu"]).
#define TDIM 32
#define TROWS 8

extern "C" __global__ void nchw_to_nhwc_tiled(const float *src, float *dst, int C, int HW)
{
    __shared__ float tile[TDIM][TDIM + 1];
    const int img = blockIdx.z;
    const int hw0 = blockIdx.x * TDIM;
    const int ch0 = blockIdx.y * TDIM;
    const float *plane = src + (size_t)img * C * HW;
    float *outp = dst + (size_t)img * HW * C;

    for (int r = threadIdx.y; r < TDIM; r += TROWS) {  // r: channel within the tile
        const int ch = ch0 + r, hw = hw0 + threadIdx.x;
        if (ch < C && hw < HW)
            tile[r][threadIdx.x] = plane[(size_t)ch * HW + hw];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < TDIM; r += TROWS) {  // r: hw within the tile
        const int hw = hw0 + r, ch = ch0 + threadIdx.x;
        if (ch < C && hw < HW)
            outp[(size_t)hw * C + ch] = tile[threadIdx.x][r];
    }
}
