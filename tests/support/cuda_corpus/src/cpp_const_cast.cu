// A write through const_cast of a const float* parameter: the caller's array changes.
extern "C" __global__ void normalize_through_const(const float* x, const float* norm, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float* w = const_cast<float*>(x);
        w[i] = x[i] / norm[0];
    }
}
