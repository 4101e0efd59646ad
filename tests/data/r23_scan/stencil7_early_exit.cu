// A 3-D 7-point Laplacian on an nx x ny x nz box, one thread per point on a 3-D grid of 8 x 8 x 4
// blocks, early exits per axis and the linear index declared once.
extern "C" __global__ void lap7(const float *f, float *g, int nx, int ny, int nz)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || x >= nx - 1) return;
    if (y < 1 || y >= ny - 1) return;
    if (z < 1 || z >= nz - 1) return;
    const long plane = (long)nx * ny;
    const long c = z * plane + (long)y * nx + x;
    g[c] = f[c - 1] + f[c + 1] + f[c - nx] + f[c + nx] + f[c - plane] + f[c + plane] - 6.0f * f[c];
}
