// y = alpha * A x + beta * y, row-major A, one thread per row (the first gemv students
// write; uncoalesced reads of A).
extern "C" __global__ void gemv_row_per_thread(const float* A, const float* x, float* y, int m, int n, float alpha, float beta) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float sum = 0.0f;
        for (int j = 0; j < n; ++j) sum += A[row * n + j] * x[j];
        y[row] = alpha * sum + beta * y[row];
    }
}
