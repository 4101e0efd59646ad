// sum of the positive elements, early returns for the others
extern "C" __global__ void positive_sum(const float *in, float *acc, int n)
{
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n) return;
    float v = in[t];
    if (v <= 0.0f) return;
    atomicAdd(acc, v);
}
