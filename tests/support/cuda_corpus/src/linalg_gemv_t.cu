// y = A^T x, one thread per column of A, x staged through shared memory in tiles of TB.
#define TB 64

extern "C" __global__ void gemv_t_shared(const float* A, const float* x, float* y, int m, int n) {
    __shared__ float xs[TB];
    int j = blockIdx.x * TB + threadIdx.x;
    float sum = 0.0f;
    for (int i0 = 0; i0 < m; i0 += TB) {
        xs[threadIdx.x] = (i0 + threadIdx.x < m) ? x[i0 + threadIdx.x] : 0.0f;
        __syncthreads();
        int lim = min(TB, m - i0);
        if (j < n)
            for (int k = 0; k < lim; ++k) sum += A[(i0 + k) * n + j] * xs[k];
        __syncthreads();
    }
    if (j < n) y[j] = sum;
}
