// Exercise: thread coarsening. Each thread computes two elements of P, in the same
// row, TILE_WIDTH columns apart, so a block of TILE_WIDTH x TILE_WIDTH threads computes
// a TILE_WIDTH x 2*TILE_WIDTH tile of P, and the grid has half as many blocks across.
// Each tile of M the block loads serves both halves. Any m, k, n.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_coarse(const float* M, const float* N, float* P,
                                         int m, int k, int n) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];  // TODO: a tile of N for each half
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * 2 * TILE_WIDTH + tx;  // the first of this thread's two columns
    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;

    float sum = 0.0f;  // TODO: and a sum for column col + TILE_WIDTH
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;
        int nrow = ph * TILE_WIDTH + ty;
        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nds[ty][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nds[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
    // TODO: the second element
}
