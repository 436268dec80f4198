// Vector add with 128-bit loads: the body through reinterpret_cast<const float4*>, the
// n % 4 leftover elements by the first threads ("CUDA Pro Tip: Increase Performance with
// Vectorized Memory Access").
extern "C" __global__ void vadd_vec4(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 va = reinterpret_cast<const float4*>(a)[i];
        float4 vb = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(va.x + vb.x, va.y + vb.y, va.z + vb.z, va.w + vb.w);
    }
    if (i < n % 4) {
        int j = n4 * 4 + i;
        c[j] = a[j] + b[j];
    }
}
