// Exercise: one thread per element of P = M x N, all matrices Width x Width,
// row-major (element (row, col) of a matrix sits at row * Width + col).
extern "C" __global__ void matmul_naive(const float* M, const float* N, float* P, int Width) {
    int row = 0;  // TODO: the row of P this thread computes (blockIdx.y, blockDim.y, threadIdx.y)
    int col = 0;  // TODO: its column (the .x coordinates)
    // TODO: the grid may overhang the matrix: threads outside it must not touch memory
    float sum = 0.0f;
    // TODO: add up M[row][i] * N[i][col] for i = 0 .. Width - 1
    P[row * Width + col] = sum;
}
