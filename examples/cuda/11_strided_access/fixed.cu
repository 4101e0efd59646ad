// 11_strided_access / fixed: structure-of-arrays layout. Field f of particle i lives at
// particles[f * n + i], so a warp reads 128 contiguous bytes per field and DRAM moves only the
// two fields used. NOTE: a data-layout change: the same signature, but the caller must store the
// particles in SoA order (main.cu builds both layouts from the same values). Not a drop-in
// replacement for particles_advance_aos on the same buffer.
// Launch: grid ceil(n/256), block 256.
#ifndef PARTICLE_FIELDS
#define PARTICLE_FIELDS 8
#endif

extern "C" __global__ void particles_advance_soa(const float *particles, float *out, int n, float dt)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)n) {
        const float x = particles[0 * (size_t)n + i];
        const float vx = particles[3 * (size_t)n + i];
        out[i] = x + vx * dt;
    }
}
