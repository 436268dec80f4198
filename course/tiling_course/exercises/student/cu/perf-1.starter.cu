// P (m x n) = M (m x k) times N (k x n), where N arrives transposed: Nt is n x k,
// row-major, Nt[j * k + i] = N[i][j] (attention's Q times K-transposed has this form).
// The bounds-checked tiled kernel, adapted: N's element (nrow, col) is read from
// Nt[col * k + nrow]. The product is right; one of the loads is not coalesced.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_mnt(const float* M, const float* Nt, float* P,
                                      int m, int k, int n) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nts[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;

    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;  // column of M this thread loads
        int nrow = ph * TILE_WIDTH + ty;  // row of N this thread loads
        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nts[ty][tx] = (nrow < k && col < n) ? Nt[col * k + nrow] : 0.0f;  // N[nrow][col]
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nts[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
