// unseen3/04_fdtd3d_radius4_per_point / slow: the 8th-order (radius 4, 25-point) finite-difference stencil of
// NVIDIA/cuda-samples FDTD3d (Samples/5_Domain_Specific/FDTD3d, FDTD3dReference.cpp fdtdReference; BSD-3)
// as one GPU thread per interior point: 25 global loads per output, coefficients in global memory (a launch
// spec cannot fill __constant__), 3-D blocks (16, 4, 4). Each input is fetched by up to 25 threads and
// the z neighbours come from planes 1-4 away (L2 traffic). The volume carries a RADIUS-wide halo that is
// read but not written.
#define RADIUS 4

extern "C" __global__ void fdtd3d_naive(const float *input, float *output, const float *coeff, int dimx, int dimy,
                                        int dimz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    int y = blockIdx.y * blockDim.y + threadIdx.y + RADIUS;
    int z = blockIdx.z * blockDim.z + threadIdx.z + RADIUS;
    if (x >= dimx - RADIUS || y >= dimy - RADIUS || z >= dimz - RADIUS) return;
    int stride_y = dimx;
    int stride_z = dimx * dimy;
    int idx = z * stride_z + y * stride_y + x;
    float value = coeff[0] * input[idx];
    for (int ir = 1; ir <= RADIUS; ir++) {
        value += coeff[ir] * (input[idx + ir] + input[idx - ir] + input[idx + ir * stride_y]
                              + input[idx - ir * stride_y] + input[idx + ir * stride_z] + input[idx - ir * stride_z]);
    }
    output[idx] = value;
}
