// unseen/15_int8_saturating_add / slow: c = saturate_int8(a + b), one signed byte per thread with a
// size_t index: 32-byte warp requests (one sector), 16x the memory instructions of 16-byte accesses.
// Launch: block 256, grid ceil(n / 256).
extern "C" __global__ void int8_sat_add(const signed char *a, const signed char *b, signed char *c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = (int)a[i] + (int)b[i];
        s = s > 127 ? 127 : (s < -128 ? -128 : s);
        c[i] = (signed char)s;
    }
}
