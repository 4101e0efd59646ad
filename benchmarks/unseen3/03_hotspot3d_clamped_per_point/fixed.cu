// unseen3/03_hotspot3d_clamped_per_point / fix: Rodinia's hotspotOpt1 (cuda/hotspot3D/opt1.cu): a 2-D block of
// (64, 4) threads marches up z, keeping the point below, the point and the point above in registers, so
// each plane is read once per column instead of three times; 256-byte row pieces. Guards added for sizes
// that are not multiples of the block. Launch: block (64, 4), grid (ceil(nx / 64), ceil(ny / 4)).
extern "C" __global__ void hotspot3d_opt1(const float *__restrict__ p, const float *__restrict__ tIn,
                                          float *__restrict__ tOut, float sdc, int nx, int ny, int nz, float ce,
                                          float cw, float cn, float cs, float ct, float cb, float cc)
{
    float amb_temp = 80.0f;
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    int xy = nx * ny;
    int c = i + j * nx;
    int w = (i == 0) ? c : c - 1;
    int e = (i == nx - 1) ? c : c + 1;
    int n = (j == 0) ? c : c - nx;
    int s = (j == ny - 1) ? c : c + nx;
    float below = tIn[c], center = below;
    for (int k = 0; k < nz; ++k) {
        float above = (k == nz - 1) ? center : tIn[c + xy];
        tOut[c] = cc * center + cw * tIn[w] + ce * tIn[e] + cs * tIn[s] + cn * tIn[n] + cb * below + ct * above
                  + sdc * p[c] + ct * amb_temp;
        below = center;
        center = above;
        c += xy;
        w += xy;
        e += xy;
        n += xy;
        s += xy;
    }
}
