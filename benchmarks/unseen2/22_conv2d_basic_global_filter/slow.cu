// unseen2/22_conv2d_basic_global_filter / slow: 2-D convolution with a (2r+1) x (2r+1) filter,
// zero ("ghost cell") boundary, one thread per output pixel
// (PMPP 4th ed., ch. 7, Fig. 7.7 `convolution_2D_basic_kernel`, adapted: output guard added).
// Every tap is a global load of the input and one of the filter: (2r+1)^2 * 2 loads per output,
// bound by L1/LSU throughput, not by DRAM.
// Launch: block (32, 8), grid (ceil(width/32), ceil(height/8)).
extern "C" __global__ void convolution_2D_basic_kernel(float *N, float *F, float *P, int r, int width, int height)
{
    int outCol = blockIdx.x * blockDim.x + threadIdx.x;
    int outRow = blockIdx.y * blockDim.y + threadIdx.y;
    if (outCol >= width || outRow >= height)
        return;
    float Pvalue = 0.0f;
    for (int fRow = 0; fRow < 2 * r + 1; fRow++) {
        for (int fCol = 0; fCol < 2 * r + 1; fCol++) {
            int inRow = outRow - r + fRow;
            int inCol = outCol - r + fCol;
            if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
                Pvalue += F[fRow * (2 * r + 1) + fCol] * N[inRow * width + inCol];
            }
        }
    }
    P[outRow * width + outCol] = Pvalue;
}
