// In-place scale-and-shift with float4 through a C-style cast and a grid-stride loop over
// the float4s; the tail of n % 4 floats is done by the first threads of the grid.
extern "C" __global__ void scale_shift4(float* x, float s, float t, int n) {
    float4* x4 = (float4*)x;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = gid; i < n / 4; i += blockDim.x * gridDim.x) {
        float4 v = x4[i];
        v.x = v.x * s + t; v.y = v.y * s + t; v.z = v.z * s + t; v.w = v.w * s + t;
        x4[i] = v;
    }
    if (gid < n % 4) {
        int j = (n / 4) * 4 + gid;
        x[j] = x[j] * s + t;
    }
}
