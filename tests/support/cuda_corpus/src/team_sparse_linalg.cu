// Sparse matrix-vector products (PMPP ch. 14: CSR scalar and vector, ELL, COO) and small
// dense linear algebra other than the book's tiled product.
extern "C" __global__ void spmv_csr_scalar(int rows, const int* row_ptr, const int* cols, const float* vals,
                                           const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        for (int j = row_ptr[row]; j < row_ptr[row + 1]; ++j) dot += vals[j] * x[cols[j]];
        y[row] = dot;
    }
}

// A warp per row: lanes stride over the row, then a shuffle reduction.
extern "C" __global__ void spmv_csr_vector(int rows, const int* row_ptr, const int* cols, const float* vals,
                                           const float* x, float* y) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp < rows) {
        float sum = 0.0f;
        for (int j = row_ptr[warp] + lane; j < row_ptr[warp + 1]; j += 32) sum += vals[j] * x[cols[j]];
        for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
        if (lane == 0) y[warp] = sum;
    }
}

// ELL: column-major padded arrays, -1 marks padding.
extern "C" __global__ void spmv_ell(int rows, int width, const int* cols, const float* vals, const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        for (int k = 0; k < width; ++k) {
            int c = cols[k * rows + row];
            if (c >= 0) dot += vals[k * rows + row] * x[c];
        }
        y[row] = dot;
    }
}

extern "C" __global__ void spmv_coo(int nnz, const int* r, const int* c, const float* v, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nnz) atomicAdd(&y[r[i]], v[i] * x[c[i]]);
}

// Matrix-vector, a thread per row, the vector staged through shared memory in tiles.
extern "C" __global__ void gemv_shared(const float* A, const float* x, float* y, int m, int n) {
    __shared__ float xs[64];
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n; t += 64) {
        if (threadIdx.x < 64) xs[threadIdx.x] = (t + threadIdx.x < n) ? x[t + threadIdx.x] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 64 && t + k < n; ++k)
            if (row < m) sum += A[row * n + t + k] * xs[k];
        __syncthreads();
    }
    if (row < m) y[row] = sum;
}

// Matrix-vector, a warp per row with a shuffle reduction.
extern "C" __global__ void gemv_warp(const float* A, const float* x, float* y, int m, int n) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m) return;
    float sum = 0.0f;
    for (int k = lane; k < n; k += 32) sum += A[row * n + k] * x[k];
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) y[row] = sum;
}

extern "C" __global__ void outer_product(const float* u, const float* v, float* P, int m, int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < m && c < n) P[r * n + c] = u[r] * v[c];
}

// A 4 x 4 product per thread-block of 16 threads, one struct per matrix.
struct Mat4 { float m[4][4]; };
extern "C" __global__ void batched_mat4(const Mat4* A, const Mat4* B, Mat4* C, int count) {
    int b = blockIdx.x, r = threadIdx.x / 4, c = threadIdx.x % 4;
    if (b >= count) return;
    __shared__ Mat4 a, bm;
    a.m[r][c] = A[b].m[r][c];
    bm.m[r][c] = B[b].m[r][c];
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < 4; ++k) s += a.m[r][k] * bm.m[k][c];
    C[b].m[r][c] = s;
}

// Gram matrix A^T A (n x n) of an m x n matrix, 16 x 16 tiles of the result.
extern "C" __global__ void gram_tiled(const float* A, float* G, int m, int n) {
    __shared__ float ti[16][17], tj[16][17];
    int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
    float s = 0.0f;
    for (int k0 = 0; k0 < m; k0 += 16) {
        int kr = k0 + threadIdx.x;
        ti[threadIdx.y][threadIdx.x] = (kr < m && blockIdx.y * 16 + threadIdx.y < n) ? A[kr * n + blockIdx.y * 16 + threadIdx.y] : 0.0f;
        int kr2 = k0 + threadIdx.y;
        tj[threadIdx.y][threadIdx.x] = (kr2 < m && j < n) ? A[kr2 * n + j] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; ++k) s += ti[threadIdx.y][k] * tj[k][threadIdx.x];
        __syncthreads();
    }
    if (i < n && j < n) G[i * n + j] = s;
}

// Column norms: a block per column, a shared-memory reduction of squares.
extern "C" __global__ void column_norms(const double* A, double* norms, int m, int n) {
    __shared__ double s[128];
    int col = blockIdx.x;
    double acc = 0.0;
    for (int r = threadIdx.x; r < m; r += blockDim.x) acc += A[r * n + col] * A[r * n + col];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) norms[col] = sqrt(s[0]);
}

// Forward substitution of a small lower-triangular system, one block per system.
extern "C" __global__ void trisolve_lower(const float* L, const float* b, float* x, int n) {
    __shared__ float xs[64];
    int sys = blockIdx.x, t = threadIdx.x;
    const float* Ls = L + sys * n * n;
    for (int i = 0; i < n; ++i) {
        if (t == 0) {
            float s = b[sys * n + i];
            for (int k = 0; k < i; ++k) s -= Ls[i * n + k] * xs[k];
            xs[i] = s / Ls[i * n + i];
        }
        __syncthreads();
    }
    if (t < n) x[sys * n + t] = xs[t];
}
