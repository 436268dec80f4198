// g1_rect_tiles (layout NN) split into device helpers: one that stages any tile with the
// whole block striding over it, one for the dot product of a row and a column of the tiles.
#ifndef TILE_M
#define TILE_M 16
#endif
#ifndef TILE_N
#define TILE_N 8
#endif
#ifndef TILE_K
#define TILE_K 4
#endif

template <int ROWS, int COLS>
__device__ void stage(float (*tile)[COLS], const float* src, int ld, int row0, int col0, int rows, int cols) {
    int nthreads = blockDim.x * blockDim.y;
    for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < ROWS * COLS; idx += nthreads) {
        int r = row0 + idx / COLS;
        int c = col0 + idx % COLS;
        if (r < rows && c < cols)
            tile[idx / COLS][idx % COLS] = src[r * ld + c];
        else
            tile[idx / COLS][idx % COLS] = 0.0f;
    }
}

__device__ float dot(const float (*a)[TILE_K], const float (*b)[TILE_N], int y, int x) {
    float s = 0.0f;
    for (int q = 0; q < TILE_K; ++q)
        s += a[y][q] * b[q][x];
    return s;
}

extern "C" __global__ void matmul_rect(const float* A, const float* B, float* C, int m, int k, int n) {
    __shared__ float tileA[TILE_M][TILE_K];
    __shared__ float tileB[TILE_K][TILE_N];
    int steps = (k + TILE_K - 1) / TILE_K;
    float out = 0.0f;
    for (int s = 0; s < steps; ++s) {
        stage<TILE_M, TILE_K>(tileA, A, k, blockIdx.y * TILE_M, s * TILE_K, m, k);
        stage<TILE_K, TILE_N>(tileB, B, n, s * TILE_K, blockIdx.x * TILE_N, k, n);
        __syncthreads();
        out += dot(tileA, tileB, threadIdx.y, threadIdx.x);
        __syncthreads();
    }
    int y = blockIdx.y * TILE_M + threadIdx.y, x = blockIdx.x * TILE_N + threadIdx.x;
    if (y < m && x < n)
        C[y * n + x] = out;
}
