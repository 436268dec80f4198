// The naive kernel: one thread per element of P = M x N, all matrices Width x Width,
// row-major (element (row, col) of a matrix sits at row * Width + col).
// Every thread reads a whole row of M and a whole column of N from global memory:
// 2 * Width loads for 2 * Width floating-point operations.
extern "C" __global__ void matmul_naive(const float* M, const float* N, float* P, int Width) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;  // which element this thread computes
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= Width || col >= Width)                 // the grid may overhang the matrix
        return;
    float sum = 0.0f;
    for (int k = 0; k < Width; ++k)
        sum += M[row * Width + k] * N[k * Width + col];
    P[row * Width + col] = sum;
}
