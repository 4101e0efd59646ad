// unseen3/01_cumsum_rows_thread_per_row / slow: torch.cumsum(x, dim=-1) on a [rows, len] fp32 matrix in the
// form of PyTorch's CPU kernel (aten/src/ATen/native/cpu/ReduceOpsKernel.cpp, cpu_cum_base_kernel /
// cumsum_cpu_kernel, BSD-3): one running sum walked along each row, here one GPU thread per row.
// Lanes read and write rows `len` floats apart (uncoalesced), and 4096 rows make only 32 blocks of 128.
extern "C" __global__ void cumsum_rows_serial(const float *self_data, float *result_data, int rows, int len)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float *src = self_data + (long long)row * len;
        float *dst = result_data + (long long)row * len;
        float cum = 0.0f;
        for (int i = 0; i < len; i++) {
            cum += src[i];
            dst[i] = cum;
        }
    }
}
