// Euclidean norm of every column of a row-major matrix: one thread per column walking
// down the rows (neighbouring threads read neighbouring words).
extern "C" __global__ void col_norms_thread(const float* A, float* norms, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < m; ++i) {
            float v = A[i * n + j];
            s += v * v;
        }
        norms[j] = sqrtf(s);
    }
}
