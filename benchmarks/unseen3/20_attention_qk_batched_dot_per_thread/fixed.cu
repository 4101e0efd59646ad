// unseen3/20_attention_qk_batched_dot_per_thread / fix: a shared-memory tiled batched GEMM (PMPP-style 32 x 32
// tiles, the CUDA C++ Programming Guide "Shared Memory" matmul, one (b, h) per blockIdx.z): a (32, 8) block
// computes a 32 x 32 tile of scores, four per thread, from 32 x 32 tiles of Q and K staged in shared
// memory (K padded against bank conflicts); tiles wholly above the diagonal only write -INFINITY.
// Each thread adds the products in the original order. Launch: block (32, 8), grid (ceil(T/32), ceil(T/32), B*NH).
#include <math.h>
#define TILE 32

extern "C" __global__ void attention_query_key_tiled(float *__restrict__ preatt, const float *__restrict__ inp, int B,
                                                     int T, int C, int NH)
{
    __shared__ float q_tile[TILE][TILE];
    __shared__ float k_tile[TILE][TILE + 1];
    int bh = blockIdx.z, b = bh / NH, h = bh % NH;
    int C3 = C * 3, hs = C / NH;
    int t0 = blockIdx.y * TILE, s0 = blockIdx.x * TILE;  // rows t (queries), columns t2 (keys)
    float *out = preatt + (long long)bh * T * T;
    int t2 = s0 + threadIdx.x;
    if (s0 > t0 + TILE - 1) {  // every t2 of the tile is past every t
        for (int r = threadIdx.y; r < TILE; r += 8)
            if (t0 + r < T && t2 < T) out[(long long)(t0 + r) * T + t2] = -INFINITY;
        return;
    }
    const float *q_base = inp + (long long)b * T * C3 + h * hs;
    const float *k_base = q_base + C;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < hs; k0 += TILE) {
        int kn = min(TILE, hs - k0);
        for (int r = threadIdx.y; r < TILE; r += 8) {
            int tq = t0 + r, tk = s0 + r;
            q_tile[r][threadIdx.x] = (tq < T && threadIdx.x < kn) ? q_base[(long long)tq * C3 + k0 + threadIdx.x] : 0.0f;
            k_tile[r][threadIdx.x] = (tk < T && threadIdx.x < kn) ? k_base[(long long)tk * C3 + k0 + threadIdx.x] : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < kn; kk++) {
            float kv = k_tile[threadIdx.x][kk];
            for (int i = 0; i < 4; i++) acc[i] += q_tile[threadIdx.y + 8 * i][kk] * kv;
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
        int t = t0 + threadIdx.y + 8 * i;
        if (t >= T || t2 >= T) continue;
        float val = acc[i];
        val *= 1.0 / sqrtf(hs);
        out[(long long)t * T + t2] = t2 > t ? -INFINITY : val;
    }
}
