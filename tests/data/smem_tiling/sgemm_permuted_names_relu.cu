// Naive SGEMM with a ReLU epilogue, in the style of per1cycle/sgemm-optimize kernel/sgemm_naive.cuh: the
// dimensions are named against convention (x < N rows, y < K columns, the shared dimension is M), the
// row comes from threadIdx.x (uncoalesced), the accumulation is written `tmp = tmp + a * b`, and the
// epilogue fuses alpha, a bias beta and a ReLU (fmaxf) as fused-epilogue examples do.
__global__ void sgemm_naive(int N, int M, int K, float *a, float *b, float *c, float alpha, float beta)
{
    int x = threadIdx.x + blockDim.x * blockIdx.x;
    int y = threadIdx.y + blockDim.y * blockIdx.y;

    if (x < N && y < K)
    {
        float tmp = 0.0f;
        for (int m = 0; m < M; m++)
        {
            tmp = tmp + a[x * M + m] * b[m * K + y];
        }

        c[x * K + y] = fmaxf(alpha * tmp + beta, 0.0f);
    }
}
