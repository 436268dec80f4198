// __launch_bounds__ with an expression of macros, as in register-tiled GEMM code
// (BM * BN / (TM * TN) threads): here a rank-1 update C += alpha * u v^T, each thread
// holding a TM x TN tile of the product in registers.
#define BM 32
#define BN 32
#define TM 4
#define TN 4

extern "C" __global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
rank1_regtile(const float* u, const float* v, float* C, int m, int n, float alpha) {
    __shared__ float us[BM], vs[BN];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    if (tid < BM) us[tid] = (row0 + tid < m) ? u[row0 + tid] : 0.0f;
    if (tid < BN) vs[tid] = (col0 + tid < n) ? v[col0 + tid] : 0.0f;
    __syncthreads();
    int tr = (tid / (BN / TN)) * TM, tc = (tid % (BN / TN)) * TN;
    float ru[TM], rv[TN], acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) ru[i] = us[tr + i];
#pragma unroll
    for (int j = 0; j < TN; ++j) rv[j] = vs[tc + j];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = alpha * ru[i] * rv[j];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int r = row0 + tr + i, c = col0 + tc + j;
            if (r < m && c < n) C[r * n + c] += acc[i][j];
        }
}
