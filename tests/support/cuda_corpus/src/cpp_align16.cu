// An __align__(16) struct of four floats, loaded and stored whole: normalize xyz and keep
// the length in w.
struct __align__(16) Vec4 {
    float x, y, z, w;
};

extern "C" __global__ void normalize_vec4(const Vec4* in, Vec4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Vec4 v = in[i];
        float len = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
        Vec4 r;
        r.x = v.x / len;
        r.y = v.y / len;
        r.z = v.z / len;
        r.w = len;
        out[i] = r;
    }
}
