// The naive kernel's loop, with N's tiles staged in shared memory (M is still read
// from global memory). Width is a multiple of TILE_WIDTH; blocks are
// TILE_WIDTH x TILE_WIDTH threads, one element of P each.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled_n(const float* M, const float* N, float* P, int Width) {
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // Nds is complete
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += M[row * Width + ph * TILE_WIDTH + i] * Nds[i][tx];
        __syncthreads();  // everyone is done with Nds before the next phase overwrites it
    }
    P[row * Width + col] = sum;
}
