// sizeof(s[0]) in index arithmetic, on a dynamically sized extern __shared__ array: each
// thread owns a float4-sized group of slots; coalesced loads, then each element becomes
// the sum of the other three of its group.
extern "C" __global__ void others_in_group4(const float* x, float* out, int n) {
    extern __shared__ float s[];
    const int per = sizeof(float4) / sizeof(s[0]);
    int t = threadIdx.x;
    int base = blockIdx.x * blockDim.x * per;
    for (int k = 0; k < per; ++k) {
        int g = base + t + k * blockDim.x;
        s[t + k * blockDim.x] = (g < n) ? x[g] : 0.0f;
    }
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < per; ++k) sum += s[t * per + k];
    int g0 = base + t * per;
    for (int k = 0; k < per; ++k)
        if (g0 + k < n) out[g0 + k] = sum - s[t * per + k];
}
