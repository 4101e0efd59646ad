// tests/data/elementwise: tanh GELU over float data typed with double literals and tanh()/pow():
// every element runs on the fp64 pipe (demote-double's slow form; written for these tests).
extern "C" __global__ void gelu_float_promoted(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * pow(v, 3.0))));
    }
}
