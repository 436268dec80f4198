// References to shared elements: each thread hands its value to its right neighbour's
// slot, then adds its own through `float& acc = s[threadIdx.x]`; the block's sums are
// then read back in reverse.
#define B 128

extern "C" __global__ void pair_sums_ref(const float* x, float* out, float* rev, int n) {
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    float v = (i < n) ? x[i] : 0.0f;
    if (t == 0) s[0] = 0.0f;
    if (t + 1 < B) s[t + 1] = v;
    __syncthreads();
    float& acc = s[threadIdx.x];
    acc += v;
    if (i < n) out[i] = acc;
    __syncthreads();
    if (i < n) rev[i] = s[B - 1 - t];
}
