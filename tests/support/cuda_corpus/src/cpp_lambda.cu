// Lambdas in device code: one capturing by reference and counting into a local, and a
// generic (auto-parameter) lambda.
extern "C" __global__ void lambda_clamp_count(const float* x, float* y, int* hits, float lo, float hi, int n, int per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int count = 0;
    auto clampc = [&](float v) {
        if (v < lo || v > hi) ++count;
        return fminf(fmaxf(v, lo), hi);
    };
    auto mul = [](auto a, auto b) { return a * b; };
    for (int k = 0; k < per_thread; ++k) {
        int i = t * per_thread + k;
        if (i < n) y[i] = mul(clampc(x[i]), 2.0f);
    }
    hits[t] = count;
}
