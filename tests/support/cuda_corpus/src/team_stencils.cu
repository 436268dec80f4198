// Stencils and convolutions in the styles of PMPP ch. 7 and 8: halo cells in shared
// memory, a mask in constant memory, 2-D tiles, 3-D z-marching with registers.
#define MASK_WIDTH 5
#define TILE 64
#define T2 16
__constant__ float M[MASK_WIDTH];
__constant__ float M2[3][3];

extern "C" __global__ void conv1d_basic(const float* N, float* P, int width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width) return;
    float pvalue = 0.0f;
    int start = i - MASK_WIDTH / 2;
    for (int j = 0; j < MASK_WIDTH; j++)
        if (start + j >= 0 && start + j < width) pvalue += N[start + j] * M[j];
    P[i] = pvalue;
}

// Tiled, with the halo cells loaded into shared memory by the first and last threads.
extern "C" __global__ void conv1d_tiled_halo(const float* N, float* P, int width) {
    __shared__ float N_ds[TILE + MASK_WIDTH - 1];
    int n = MASK_WIDTH / 2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int halo_left = (blockIdx.x - 1) * blockDim.x + threadIdx.x;
    if (threadIdx.x >= blockDim.x - n) N_ds[threadIdx.x - (blockDim.x - n)] = (halo_left < 0) ? 0.0f : N[halo_left];
    N_ds[n + threadIdx.x] = (i < width) ? N[i] : 0.0f;
    int halo_right = (blockIdx.x + 1) * blockDim.x + threadIdx.x;
    if (threadIdx.x < n) N_ds[n + blockDim.x + threadIdx.x] = (halo_right >= width) ? 0.0f : N[halo_right];
    __syncthreads();
    float pvalue = 0.0f;
    for (int j = 0; j < MASK_WIDTH; j++) pvalue += N_ds[threadIdx.x + j] * M[j];
    if (i < width) P[i] = pvalue;
}

// Tiled with only the interior in shared memory; halos come from global memory (caches).
extern "C" __global__ void conv1d_tiled_caching(const float* N, float* P, int width) {
    __shared__ float N_ds[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    N_ds[threadIdx.x] = (i < width) ? N[i] : 0.0f;
    __syncthreads();
    int this_start = blockIdx.x * blockDim.x, next_start = (blockIdx.x + 1) * blockDim.x;
    int start = i - MASK_WIDTH / 2;
    float pvalue = 0.0f;
    for (int j = 0; j < MASK_WIDTH; j++) {
        int k = start + j;
        if (k >= 0 && k < width) {
            if (k >= this_start && k < next_start) pvalue += N_ds[threadIdx.x + j - MASK_WIDTH / 2] * M[j];
            else pvalue += N[k] * M[j];
        }
    }
    if (i < width) P[i] = pvalue;
}

// 2-D convolution with a 3 x 3 constant mask and a shared input tile with a halo of one.
extern "C" __global__ void conv2d_tiled(const float* in, float* out, int h, int w) {
    __shared__ float tile[T2 + 2][T2 + 2];
    int col = blockIdx.x * T2 + threadIdx.x - 1, row = blockIdx.y * T2 + threadIdx.y - 1;
    tile[threadIdx.y][threadIdx.x] = (row >= 0 && row < h && col >= 0 && col < w) ? in[row * w + col] : 0.0f;
    __syncthreads();
    int tx = threadIdx.x - 1, ty = threadIdx.y - 1;
    if (tx >= 0 && tx < T2 && ty >= 0 && ty < T2 && row < h && col < w) {
        float s = 0.0f;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) s += M2[a][b] * tile[ty + a][tx + b];
        out[row * w + col] = s;
    }
}

// A 1-D three-point stencil (heat equation step) with halos, one cell per thread.
extern "C" __global__ void heat1d(const float* u, float* v, float alpha, int n) {
    __shared__ float s[130];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x + 1;
    s[t] = (i < n) ? u[i] : 0.0f;
    if (threadIdx.x == 0) s[0] = (i > 0 && i - 1 < n) ? u[i - 1] : 0.0f;
    if (threadIdx.x == blockDim.x - 1) s[t + 1] = (i + 1 < n) ? u[i + 1] : 0.0f;
    __syncthreads();
    if (i > 0 && i < n - 1) v[i] = s[t] + alpha * (s[t - 1] - 2.0f * s[t] + s[t + 1]);
    else if (i < n) v[i] = s[t];
}

// A 2-D five-point Jacobi step on a shared tile with a one-cell halo (boundary kept).
extern "C" __global__ void jacobi2d(const float* a, float* b, int h, int w) {
    __shared__ float t[T2 + 2][T2 + 2];
    int x = blockIdx.x * T2 + threadIdx.x, y = blockIdx.y * T2 + threadIdx.y;
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    bool in = x < w && y < h;
    t[ly][lx] = in ? a[y * w + x] : 0.0f;
    if (threadIdx.x == 0) t[ly][0] = (x > 0 && y < h) ? a[y * w + x - 1] : 0.0f;
    if (threadIdx.x == T2 - 1) t[ly][T2 + 1] = (x + 1 < w && y < h) ? a[y * w + x + 1] : 0.0f;
    if (threadIdx.y == 0) t[0][lx] = (y > 0 && x < w) ? a[(y - 1) * w + x] : 0.0f;
    if (threadIdx.y == T2 - 1) t[T2 + 1][lx] = (y + 1 < h && x < w) ? a[(y + 1) * w + x] : 0.0f;
    __syncthreads();
    if (!in) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) b[y * w + x] = t[ly][lx];
    else b[y * w + x] = 0.25f * (t[ly][lx - 1] + t[ly][lx + 1] + t[ly - 1][lx] + t[ly + 1][lx]);
}

// Game of Life on a torus: neighbours wrap around the edges.
extern "C" __global__ void life_step(const unsigned char* cur, unsigned char* next, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int alive = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx || dy) alive += cur[((y + dy + h) % h) * w + (x + dx + w) % w];
    unsigned char c = cur[y * w + x];
    next[y * w + x] = (alive == 3 || (c && alive == 2)) ? 1 : 0;
}

// A 3-D seven-point stencil marching in z, with the planes below and above in registers
// (PMPP 8.5, register tiling).
extern "C" __global__ void stencil3d_march(const float* in, float* out, int nx, int ny, int nz, float c0, float c1) {
    __shared__ float plane[8][8];
    int x = blockIdx.x * 6 + threadIdx.x - 1, y = blockIdx.y * 6 + threadIdx.y - 1;
    bool inside = x >= 0 && x < nx && y >= 0 && y < ny;
    float below = 0.0f, cur = inside ? in[0 * ny * nx + y * nx + x] : 0.0f, above;
    for (int z = 0; z < nz; ++z) {
        above = (inside && z + 1 < nz) ? in[(z + 1) * ny * nx + y * nx + x] : 0.0f;
        __syncthreads();
        plane[threadIdx.y][threadIdx.x] = cur;
        __syncthreads();
        int tx = threadIdx.x, ty = threadIdx.y;
        if (tx >= 1 && tx <= 6 && ty >= 1 && ty <= 6 && inside) {
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1)
                out[z * ny * nx + y * nx + x] = c0 * cur + c1 * (plane[ty][tx - 1] + plane[ty][tx + 1] + plane[ty - 1][tx] +
                                                                 plane[ty + 1][tx] + below + above);
            else
                out[z * ny * nx + y * nx + x] = cur;
        }
        below = cur;
        cur = above;
    }
}
