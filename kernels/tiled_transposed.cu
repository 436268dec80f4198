// The tiled kernel with N's tile kept transposed in shared memory: Nds[c][r] holds the
// tile's element (r, c), so the inner loop reads Nds[tx][k]. The product is the same as
// tiled.cu's; the shared-memory banks are not. A row of Nds is TILE_WIDTH + PAD words
// long, so lanes with consecutive tx store and read words TILE_WIDTH + PAD apart: with
// TILE_WIDTH 32 and PAD 0 all 32 lanes of a warp hit one bank (a 32-way conflict), with
// PAD 1 they hit 32 different banks. Chapter 5, "Warps, coalescing and banks", traces both.
#ifndef TILE_WIDTH
#define TILE_WIDTH 32
#endif
#ifndef PAD
#define PAD 0
#endif

extern "C" __global__ void matmul_tiled_transposed(const float* M, const float* N, float* P, int Width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH + PAD];  // Nds[column][row] of N's tile

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;

    float sum = 0.0f;
    for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
        Mds[ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];
        Nds[tx][ty] = N[(ph * TILE_WIDTH + ty) * Width + col];  // stored down a column
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += Mds[ty][k] * Nds[tx][k];                     // read along a row
        __syncthreads();
    }
    P[row * Width + col] = sum;
}
