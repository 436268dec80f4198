// Rank-1 update A += alpha * x y^T (BLAS ger) on a 2-D grid; the block's slices of x and
// y are staged in shared memory by its first row and first column of threads.
#define TS 16

extern "C" __global__ void ger_shared(const float* x, const float* y, float* A, int m, int n, float alpha) {
    __shared__ float xs[TS], ys[TS];
    int i = blockIdx.y * TS + threadIdx.y, j = blockIdx.x * TS + threadIdx.x;
    if (threadIdx.y == 0) ys[threadIdx.x] = (j < n) ? y[j] : 0.0f;
    if (threadIdx.x == 0) xs[threadIdx.y] = (i < m) ? alpha * x[i] : 0.0f;
    __syncthreads();
    if (i < m && j < n) A[i * n + j] += xs[threadIdx.y] * ys[threadIdx.x];
}
