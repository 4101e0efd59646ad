// Own slow form for smem-pad-index: exclusive Blelloch scan of 1024-element sections (512 threads,
// two elements each) in a 1-D shared array; the tree's power-of-two strides put a warp on few banks.
#define SEC 1024

extern "C" __global__ void section_scan(const float *in, float *out, int n)
{
    __shared__ float s[SEC];
    int t = threadIdx.x;
    int base = blockIdx.x * SEC;
    s[2 * t] = base + 2 * t < n ? in[base + 2 * t] : 0.0f;
    s[2 * t + 1] = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0.0f;
    int step = 1;
    for (int d = SEC / 2; d > 0; d /= 2) {
        __syncthreads();
        if (t < d) s[step * (2 * t + 2) - 1] += s[step * (2 * t + 1) - 1];
        step *= 2;
    }
    if (t == 0) s[SEC - 1] = 0.0f;
    for (int d = 1; d < SEC; d *= 2) {
        step /= 2;
        __syncthreads();
        if (t < d) {
            int left = step * (2 * t + 1) - 1;
            int right = step * (2 * t + 2) - 1;
            float keep = s[left];
            s[left] = s[right];
            s[right] += keep;
        }
    }
    __syncthreads();
    if (base + 2 * t < n) out[base + 2 * t] = s[2 * t];
    if (base + 2 * t + 1 < n) out[base + 2 * t + 1] = s[2 * t + 1];
}
