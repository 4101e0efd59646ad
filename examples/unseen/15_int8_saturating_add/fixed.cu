// unseen/15_int8_saturating_add / fixed: 16 bytes per thread through one int4 load per operand and
// one store, the per-byte saturating add done with the SIMD intrinsic __vaddss4 (4 lanes per
// 32-bit word), scalar tail for n % 16.
// Launch: block 256, grid ceil(n / (16 * 256))  (spec: [variants."fixed.cu"]).
extern "C" __global__ void int8_sat_add_x16(const signed char *a, const signed char *b, signed char *c, size_t n)
{
    const size_t base = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 16;
    if (base + 16 <= n) {
        const int4 va = *reinterpret_cast<const int4 *>(a + base);
        const int4 vb = *reinterpret_cast<const int4 *>(b + base);
        int4 vc;
        vc.x = (int)__vaddss4((unsigned int)va.x, (unsigned int)vb.x);
        vc.y = (int)__vaddss4((unsigned int)va.y, (unsigned int)vb.y);
        vc.z = (int)__vaddss4((unsigned int)va.z, (unsigned int)vb.z);
        vc.w = (int)__vaddss4((unsigned int)va.w, (unsigned int)vb.w);
        *reinterpret_cast<int4 *>(c + base) = vc;
    } else {
        for (size_t i = base; i < n; ++i) {
            int s = (int)a[i] + (int)b[i];
            s = s > 127 ? 127 : (s < -128 ? -128 : s);
            c[i] = (signed char)s;
        }
    }
}
