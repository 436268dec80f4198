// Exercise: P (m x n) = M (m x k) times N (k x n), row-major, one thread per element
// of P. The body is still the square kernel's, with one Width for everything: make it
// right for any m, k and n.
extern "C" __global__ void matmul_naive_rect(const float* M, const float* N, float* P,
                                             int m, int k, int n) {
    int Width = m;  // TODO: there is no single Width any more
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= Width || col >= Width)
        return;
    float sum = 0.0f;
    for (int i = 0; i < Width; ++i)
        sum += M[row * Width + i] * N[i * Width + col];
    P[row * Width + col] = sum;
}
