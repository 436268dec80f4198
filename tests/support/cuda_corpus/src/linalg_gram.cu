// Gram matrix G = A^T A of a tall m x n matrix: each block computes a 16 x 16 tile of G,
// marching down A sixteen rows at a time with the two column panels in shared memory.
#define TG 16

extern "C" __global__ void gram_ata(const float* A, float* G, int m, int n) {
    __shared__ float As_i[TG][TG];
    __shared__ float As_j[TG][TG];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i0 = blockIdx.y * TG, j0 = blockIdx.x * TG;
    float acc = 0.0f;
    for (int r0 = 0; r0 < m; r0 += TG) {
        int r = r0 + ty;
        As_i[ty][tx] = (r < m && i0 + tx < n) ? A[r * n + i0 + tx] : 0.0f;
        As_j[ty][tx] = (r < m && j0 + tx < n) ? A[r * n + j0 + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TG; ++k) acc += As_i[k][ty] * As_j[k][tx];
        __syncthreads();
    }
    if (i0 + ty < n && j0 + tx < n) G[(i0 + ty) * n + j0 + tx] = acc;
}
