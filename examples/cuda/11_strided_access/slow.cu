// 11_strided_access / slow: array-of-structures access. Each particle is PARTICLE_FIELDS = 8 floats
// (x, y, z, vx, vy, vz, mass, charge: 32 bytes); the kernel needs only x and vx. Consecutive
// threads read addresses 32 bytes apart, so each warp load touches 32 sectors and uses 4 of their
// 32 bytes; DRAM moves the whole 32-byte particle to deliver 8 useful bytes.
// Layout: particles[i * PARTICLE_FIELDS + f] (AoS). out[i] = x + vx * dt.
// Launch: grid ceil(n/256), block 256.
#ifndef PARTICLE_FIELDS
#define PARTICLE_FIELDS 8
#endif

extern "C" __global__ void particles_advance_aos(const float *particles, float *out, int n, float dt)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)n) {
        const float x = particles[i * PARTICLE_FIELDS + 0];
        const float vx = particles[i * PARTICLE_FIELDS + 3];
        out[i] = x + vx * dt;
    }
}
