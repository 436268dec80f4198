// Exercise: the tiled kernel with one __syncthreads() per phase instead of two. Give
// it two pairs of tiles and use them in alternate phases, so that a phase never writes
// the tiles that the previous phase's slow threads may still be reading.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled(const float* M, const float* N, float* P, int Width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];  // TODO: two of each
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = Width / TILE_WIDTH;

    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        Mds[ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // read after write: the tiles are complete
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += Mds[ty][k] * Nds[k][tx];
        __syncthreads();  // TODO: with two pairs of tiles, this one can go
    }
    P[row * Width + col] = sum;
}
