// Element-wise activations with CUDA math functions: clamp, leaky ReLU, sigmoid, tanh, softplus.
extern "C" __global__ void activations(const float* x, float* clamped, float* leaky, float* sig, float* th,
                                       float* softplus, float lo, float hi, float slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    clamped[i] = fminf(fmaxf(v, lo), hi);
    leaky[i] = v > 0.0f ? v : slope * v;
    sig[i] = 1.0f / (1.0f + expf(-v));
    th[i] = tanhf(v);
    softplus[i] = v > 20.0f ? v : log1pf(expf(v));
}
