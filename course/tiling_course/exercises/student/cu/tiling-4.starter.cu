// Exercise: the naive kernel's loop, with N's tiles staged in shared memory (M is still
// read from global memory). Width is a multiple of TILE_WIDTH; blocks are
// TILE_WIDTH x TILE_WIDTH threads, one element of P each.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled_n(const float* M, const float* N, float* P, int Width) {
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];  // TODO: use it
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    // TODO: phase by phase, load one tile of N into Nds, then take the products from it
    for (int i = 0; i < Width; ++i)
        sum += M[row * Width + i] * N[i * Width + col];
    P[row * Width + col] = sum;
}
