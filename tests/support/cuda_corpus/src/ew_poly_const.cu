// Polynomial evaluation by Horner's rule with the coefficients in constant memory (all
// threads read the same coefficient at once: a broadcast).
#define DEG 7
__constant__ float coeffs[DEG + 1];

extern "C" __global__ void poly_eval(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float r = coeffs[DEG];
#pragma unroll
        for (int k = DEG - 1; k >= 0; --k) r = r * v + coeffs[k];
        y[i] = r;
    }
}
