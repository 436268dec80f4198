// A kernel with C++ linkage (no extern "C"): its symbol is mangled, so the host finds it
// through name_expressions. It calls an inline __device__ helper and an overloaded one.
__device__ inline float fused(float a, float x, float y) { return a * x + y; }
__device__ inline float twice(float v) { return v + v; }
__device__ inline int twice(int v) { return v << 1; }

__global__ void scale_add(const float* x, const float* y, float* out, int* doubled, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = twice(fused(a, x[i], y[i]));
        doubled[i] = twice(i);
    }
}
