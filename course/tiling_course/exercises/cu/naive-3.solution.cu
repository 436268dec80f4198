// P (m x n) = M (m x k) times N (k x n), row-major, one thread per element of P.
// A row of M has k elements, a row of N and of P has n; P has m rows.
extern "C" __global__ void matmul_naive_rect(const float* M, const float* N, float* P,
                                             int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n)
        return;
    float sum = 0.0f;
    for (int i = 0; i < k; ++i)
        sum += M[row * k + i] * N[i * n + col];
    P[row * n + col] = sum;
}
