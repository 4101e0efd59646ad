// unseen3/03_hotspot3d_clamped_per_point / slow: Rodinia's HotSpot3D thermal step (rodinia 3.1,
// cuda/hotspot3D, computeTempCPU in 3D.c; Rodinia licence, University of Virginia, BSD-style) moved to the
// GPU as one thread per grid point: a 7-point stencil whose neighbours are clamped to the point itself at
// the faces, plus the power term. 3-D blocks (16, 4, 4): each warp covers two 64-byte row pieces and every
// input value is fetched by up to seven threads from L1/L2.
extern "C" __global__ void hotspot3d_naive(const float *p, const float *tIn, float *tOut, float sdc, int nx, int ny,
                                           int nz, float ce, float cw, float cn, float cs, float ct, float cb, float cc)
{
    float amb_temp = 80.0f;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int c = x + y * nx + z * nx * ny;
    int w = (x == 0) ? c : c - 1;
    int e = (x == nx - 1) ? c : c + 1;
    int n = (y == 0) ? c : c - nx;
    int s = (y == ny - 1) ? c : c + nx;
    int b = (z == 0) ? c : c - nx * ny;
    int t = (z == nz - 1) ? c : c + nx * ny;
    tOut[c] = cc * tIn[c] + cw * tIn[w] + ce * tIn[e] + cs * tIn[s] + cn * tIn[n] + cb * tIn[b] + ct * tIn[t]
              + sdc * p[c] + ct * amb_temp;
}
