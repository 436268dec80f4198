// The tiled kernel for any shapes: P (m x n) = M (m x k) times N (k x n), row-major.
// Threads whose element of a tile lies outside M or N load 0.0f instead: the zero adds
// nothing to the sum, and every thread still reaches both barriers. Only threads that
// own an element of P write it.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled_bounds(const float* M, const float* N, float* P,
                                               int m, int k, int n) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;  // round up: the last tile may be partial

    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;  // column of M this thread loads
        int nrow = ph * TILE_WIDTH + ty;  // row of N this thread loads
        Mds[ty][tx] = M[row * k + mcol];
        Nds[ty][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nds[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
