// A local array indexed dynamically: a ring buffer of the last WIN samples for a moving
// average down each column of a time-major T x n array.
#define WIN 5

extern "C" __global__ void moving_average(const float* x, float* y, int T, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float window[WIN];
    float sum = 0.0f;
    for (int t = 0; t < T; ++t) {
        float v = x[t * n + i];
        if (t >= WIN) sum -= window[t % WIN];
        window[t % WIN] = v;
        sum += v;
        y[t * n + i] = sum / (float)min(t + 1, WIN);
    }
}
