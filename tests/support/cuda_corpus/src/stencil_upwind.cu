// First-order upwind advection on a periodic 1-D domain: the left halo wraps around to
// the far end of the array.
#define BLOCK 128

extern "C" __global__ void upwind_periodic(const float* u, float* v, float courant, int n) {
    __shared__ float s[BLOCK + 1];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (threadIdx.x == 0) s[0] = u[(i - 1 + n) % n];
    s[threadIdx.x + 1] = (i < n) ? u[i] : 0.0f;
    __syncthreads();
    if (i < n) v[i] = s[threadIdx.x + 1] - courant * (s[threadIdx.x + 1] - s[threadIdx.x]);
}
