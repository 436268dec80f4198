// Double-precision element-wise math (exp, log1p, sqrt, fabs, fma, pow, atan2).
extern "C" __global__ void double_math(const double* x, const double* y, double* out, double* angle, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double a = x[i], b = y[i];
        out[i] = fma(exp(a), log1p(fabs(b)), sqrt(fabs(a) + 1.0)) + pow(fabs(b) + 0.5, 1.5);
        angle[i] = atan2(b, a);
    }
}
