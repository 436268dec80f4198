// P (m x n) = M (m x k) times N (k x n), where N arrives transposed: Nt is n x k,
// row-major, Nt[j * k + i] = N[i][j] (attention's Q times K-transposed has this form).
// Both tiles are loaded with threadIdx.x running along a row of their matrix, along k,
// so a warp's loads are coalesced. Nt's tile lands in Nts as it lies in Nt, Nts[j][i]
// = N[ph * TILE_WIDTH + i][blockIdx.x * TILE_WIDTH + j], and the product reads it
// transposed: Nts[tx][i].
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
        int kcol = ph * TILE_WIDTH + tx;            // column of M and of Nt this thread loads
        int ntrow = blockIdx.x * TILE_WIDTH + ty;   // row of Nt (a column of P) it loads
        Mds[ty][tx] = (row < m && kcol < k) ? M[row * k + kcol] : 0.0f;
        Nts[ty][tx] = (ntrow < n && kcol < k) ? Nt[ntrow * k + kcol] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nts[tx][i];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
