// unseen2/27_groupnorm_double_group_per_thread / slow: GroupNorm forward on NCHW fp64 with
// per-channel affine, one thread per (sample, group): the reshape-to-[N, G, C/G, H, W] definition
// of Wu & He, "Group Normalization" (ECCV 2018), Fig. 3, ported as a loop per group.
// A group is C/G * HW contiguous doubles, but lanes take different groups, 8*C/G*HW bytes apart:
// uncoalesced, three serial passes, N*G threads.
// Launch: block 128, grid ceil(N * G / 128).
typedef long long i64;

extern "C" __global__ void group_norm_fwd_naive(const double *x, const double *gamma, const double *beta, double *y,
                                                int N, int C, int HW, int G, double eps)
{
    int ng = blockIdx.x * blockDim.x + threadIdx.x;
    if (ng < N * G) {
        const int cpg = C / G;
        const i64 len = (i64)cpg * HW;
        const double *xg = x + (i64)ng * len;
        double *yg = y + (i64)ng * len;
        const int g = ng % G;
        double mean = 0.0;
        for (i64 i = 0; i < len; ++i)
            mean += xg[i];
        mean /= len;
        double var = 0.0;
        for (i64 i = 0; i < len; ++i)
            var += (xg[i] - mean) * (xg[i] - mean);
        var /= len;
        const double rstd = 1.0 / sqrt(var + eps);
        for (i64 i = 0; i < len; ++i) {
            const int c = g * cpg + (int)(i / HW);
            yg[i] = (xg[i] - mean) * rstd * gamma[c] + beta[c];
        }
    }
}
