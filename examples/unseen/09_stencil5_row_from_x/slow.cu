// 5-point Jacobi sweep on an ny x nx grid (NVIDIA's "Finite Difference Methods in CUDA C/C++, Part 1",
// Mark Harris 2013, and the cuda-samples stencil style), with the row index taken from threadIdx.x: each
// warp's loads and stores are nx floats apart. Boundary points are copied through.
extern "C" __global__ void jacobi5(const float* __restrict__ u, float* __restrict__ unew, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;   // row
    int j = blockIdx.y * blockDim.y + threadIdx.y;   // column
    if (i >= ny || j >= nx) return;
    long long p = (long long)i * nx + j;
    if (i == 0 || j == 0 || i == ny - 1 || j == nx - 1) {
        unew[p] = u[p];
    } else {
        unew[p] = 0.25f * (u[p - nx] + u[p + nx] + u[p - 1] + u[p + 1]);
    }
}
