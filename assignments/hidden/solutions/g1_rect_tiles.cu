// The instructor's solution of g1_rect_tiles, for every variant: the tiles come from -D
// options, the layout from a #define the test puts before the source (LAYOUT_NT, LAYOUT_TN,
// or neither for NN). A student writes only their own layout.
#ifndef TILE_M
#define TILE_M 16
#endif
#ifndef TILE_N
#define TILE_N 8
#endif
#ifndef TILE_K
#define TILE_K 4
#endif

extern "C" __global__ void matmul_rect(const float* A, const float* B, float* C, int m, int k, int n) {
    __shared__ float As[TILE_M][TILE_K];
    __shared__ float Bs[TILE_K][TILE_N];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_M + ty;
    int col = blockIdx.x * TILE_N + tx;
    int tid = ty * TILE_N + tx;
    const int threads = TILE_M * TILE_N;
    float sum = 0.0f;
    for (int ph = 0; ph < (k + TILE_K - 1) / TILE_K; ++ph) {
        for (int e = tid; e < TILE_M * TILE_K; e += threads) {
            int r = e / TILE_K, c = e % TILE_K;
            int gr = blockIdx.y * TILE_M + r, gc = ph * TILE_K + c;
#if defined(LAYOUT_TN)
            As[r][c] = (gr < m && gc < k) ? A[gc * m + gr] : 0.0f;
#else
            As[r][c] = (gr < m && gc < k) ? A[gr * k + gc] : 0.0f;
#endif
        }
        for (int e = tid; e < TILE_K * TILE_N; e += threads) {
            int r = e / TILE_N, c = e % TILE_N;
            int gr = ph * TILE_K + r, gc = blockIdx.x * TILE_N + c;
#if defined(LAYOUT_NT)
            Bs[r][c] = (gr < k && gc < n) ? B[gc * k + gr] : 0.0f;
#else
            Bs[r][c] = (gr < k && gc < n) ? B[gr * n + gc] : 0.0f;
#endif
        }
        __syncthreads();
        for (int i = 0; i < TILE_K; ++i)
            sum += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        C[row * n + col] = sum;
}
