// Complex numbers stored as float2: z = w * z + c for a complex scalar w, in place.
extern "C" __global__ void complex_axpy(float2* z, const float2* c, float wr, float wi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 v = z[i], k = c[i];
        z[i] = make_float2(wr * v.x - wi * v.y + k.x, wr * v.y + wi * v.x + k.y);
    }
}
