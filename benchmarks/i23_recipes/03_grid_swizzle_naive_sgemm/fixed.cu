// The naive SGEMM with grouped block order: 8 block rows run together so their B columns stay in L2.
extern "C" __global__ void sgemm_grouped_order(int M, int N, int K, const float *A, const float *B, float *C)
{
    const unsigned GROUP = 8;
    unsigned bid = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned per_group = GROUP * gridDim.x;
    unsigned first = bid / per_group * GROUP;
    unsigned rows = min(gridDim.y - first, GROUP);
    unsigned by = first + bid % per_group % rows, bx = bid % per_group / rows;
    const int col = bx * blockDim.x + threadIdx.x;
    const int row = by * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
            s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}
