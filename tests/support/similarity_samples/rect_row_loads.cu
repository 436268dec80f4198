// g1_rect_tiles (layout NN) written without the instructor's flattened loads: thread
// (ty, tx) fills row ty of the tile of A, TILE_N columns apart, and column tx of the tile of
// B, TILE_M rows apart. Correct for every tile shape of the assignment.
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
    __shared__ float sA[TILE_M][TILE_K];
    __shared__ float sB[TILE_K][TILE_N];
    const int i = blockIdx.y * TILE_M + threadIdx.y;
    const int j = blockIdx.x * TILE_N + threadIdx.x;
    float acc = 0.0f;
    for (int p0 = 0; p0 < k; p0 += TILE_K) {
        for (int c = threadIdx.x; c < TILE_K; c += TILE_N) {
            float v = 0.0f;
            if (i < m && p0 + c < k) v = A[(size_t)i * k + p0 + c];
            sA[threadIdx.y][c] = v;
        }
        for (int r = threadIdx.y; r < TILE_K; r += TILE_M) {
            float v = 0.0f;
            if (p0 + r < k && j < n) v = B[(size_t)(p0 + r) * n + j];
            sB[r][threadIdx.x] = v;
        }
        __syncthreads();
#pragma unroll
        for (int t = 0; t < TILE_K; t++) acc = fmaf(sA[threadIdx.y][t], sB[t][threadIdx.x], acc);
        __syncthreads();
    }
    if (i < m && j < n) C[(size_t)i * n + j] = acc;
}
