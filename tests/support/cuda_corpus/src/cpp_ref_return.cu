// A __device__ function returning a reference into shared memory, used on both sides of
// assignments: each block rotates its chunk by k.
__device__ float& wrap_at(float* s, int i, int n) { return s[((i % n) + n) % n]; }

extern "C" __global__ void rotate_chunks(const float* x, float* y, int n, int k) {
    __shared__ float s[128];
    int t = threadIdx.x, base = blockIdx.x * 128, i = base + t;
    int cnt = min(128, n - base);
    if (t < cnt) wrap_at(s, t + k, cnt) = x[i];
    __syncthreads();
    if (t < cnt) y[i] = wrap_at(s, t, cnt);
}
