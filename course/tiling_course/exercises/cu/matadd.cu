// The kernel of chapter 2's exercise on matrix addition: P = M + N, all three
// Width x Width and row-major, one thread per element of P.
extern "C" __global__ void matadd(const float* M, const float* N, float* P, int Width) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < Width && col < Width)
        P[row * Width + col] = M[row * Width + col] + N[row * Width + col];
}
