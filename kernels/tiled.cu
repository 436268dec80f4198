// The tiled kernel in the lecture's four steps, in the form of PMPP's Fig. 5.9: each
// block computes one TILE_WIDTH x TILE_WIDTH tile of P, its threads loading tiles of M and
// N into shared memory one phase at a time. Unlike the slides it runs Width / TILE_WIDTH
// phases and guards no load or write: Width must be a multiple of TILE_WIDTH.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled(const float* M, const float* N, float* P, int Width) {
    // Step 1: one tile of each input in shared memory, a scratchpad that the block's
    // threads fill and read themselves. Not a hardware cache: nothing is there unless
    // a thread of the block stores it.
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];

    // Step 2: the element of P this thread owns, and the number of tiles along a row.
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = Width / TILE_WIDTH;

    // Step 3: for each phase, (a) load one element of each tile, wait for the whole
    // tile; (b) use the tiles, wait until everyone is done before they are overwritten.
    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        Mds[ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // read after write: the tiles are complete
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += Mds[ty][k] * Nds[k][tx];
        __syncthreads();  // write after read: nobody still needs this phase's tiles
    }

    // Step 4: write the result.
    P[row * Width + col] = sum;
}
