// unseen3/04_fdtd3d_radius4_per_point / fix: the scheme of cuda-samples FDTD3dGPUKernel.cuh (BSD-3) and
// P. Micikevicius, "3D Finite Difference Computation on GPUs using CUDA" (GPGPU-2, 2009): a (32, 8) block
// marches up z; the z neighbours live in two register queues (behind / in front), the x/y neighbours of the
// current plane come from a shared (8 + 2R) x (32 + 2R) tile with halos, coefficients in registers.
// Each plane is read from DRAM about once. Launch: block (32, 8), grid (ceil((dimx - 2R) / 32), ceil((dimy - 2R) / 8)).
#define RADIUS 4
#define TX 32
#define TY 8

extern "C" __global__ void fdtd3d_zmarch(const float *__restrict__ input, float *__restrict__ output,
                                         const float *__restrict__ coeff, int dimx, int dimy, int dimz)
{
    __shared__ float tile[TY + 2 * RADIUS][TX + 2 * RADIUS];
    int gx = blockIdx.x * TX + threadIdx.x + RADIUS;
    int gy = blockIdx.y * TY + threadIdx.y + RADIUS;
    int tx = threadIdx.x + RADIUS, ty = threadIdx.y + RADIUS;
    bool active = gx < dimx - RADIUS && gy < dimy - RADIUS;
    long long stride_y = dimx, stride_z = (long long)dimx * dimy;
    long long column = active ? gy * stride_y + gx : 0;  // idle threads read a valid column and write nothing
    float c[RADIUS + 1];
    for (int i = 0; i <= RADIUS; i++) c[i] = coeff[i];
    float behind[RADIUS], infront[RADIUS];
    for (int i = 0; i < RADIUS; i++) {
        behind[i] = input[column + (RADIUS - 1 - i) * stride_z];  // behind[0] is the nearest plane
        infront[i] = input[column + (RADIUS + 1 + i) * stride_z];
    }
    float current = input[column + RADIUS * stride_z];
    for (int z = RADIUS; z < dimz - RADIUS; z++) {
        if (z > RADIUS) {
            for (int i = RADIUS - 1; i > 0; i--) behind[i] = behind[i - 1];
            behind[0] = current;
            current = infront[0];
            for (int i = 0; i < RADIUS - 1; i++) infront[i] = infront[i + 1];
            infront[RADIUS - 1] = input[column + (z + RADIUS) * stride_z];
        }
        __syncthreads();  // the previous plane's tile is no longer read
        for (int yy = threadIdx.y; yy < TY + 2 * RADIUS; yy += TY) {
            for (int xx = threadIdx.x; xx < TX + 2 * RADIUS; xx += TX) {
                int X = blockIdx.x * TX + xx, Y = blockIdx.y * TY + yy;
                tile[yy][xx] = (X < dimx && Y < dimy) ? input[z * stride_z + Y * stride_y + X] : 0.0f;
            }
        }
        __syncthreads();
        if (active) {
            float value = c[0] * current;
            for (int ir = 1; ir <= RADIUS; ir++) {
                value += c[ir] * (tile[ty][tx + ir] + tile[ty][tx - ir] + tile[ty + ir][tx] + tile[ty - ir][tx]
                                  + infront[ir - 1] + behind[ir - 1]);
            }
            output[z * stride_z + gy * stride_y + gx] = value;
        }
    }
}
