// Array of structures passed by pointer: charged particles pushed by a uniform field,
// the update in a __device__ function that takes the particle by reference.
struct Particle {
    float3 pos;
    float3 vel;
    float mass;
    float charge;
};

__device__ void push(Particle& p, float3 e, float dt) {
    float k = p.charge / p.mass * dt;
    p.vel.x += k * e.x;
    p.vel.y += k * e.y;
    p.vel.z += k * e.z;
    p.pos.x += p.vel.x * dt;
    p.pos.y += p.vel.y * dt;
    p.pos.z += p.vel.z * dt;
}

extern "C" __global__ void push_particles(Particle* ps, float ex, float ey, float ez, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) push(ps[i], make_float3(ex, ey, ez), dt);
}
