// Nine-point Laplacian in double precision. The block is the input tile (PMPP's first
// tiling strategy): every thread loads one cell, the threads on the tile's rim only load,
// the inner 14 x 14 compute. Cells outside the grid are zero.
#define IN_T 16
#define OUT_T (IN_T - 2)

extern "C" __global__ void laplace9_double(const double* u, double* out, int h, int w) {
    __shared__ double s[IN_T][IN_T];
    int x = blockIdx.x * OUT_T + threadIdx.x - 1;
    int y = blockIdx.y * OUT_T + threadIdx.y - 1;
    s[threadIdx.y][threadIdx.x] = (x >= 0 && x < w && y >= 0 && y < h) ? u[y * w + x] : 0.0;
    __syncthreads();
    int tx = threadIdx.x, ty = threadIdx.y;
    if (tx >= 1 && tx < IN_T - 1 && ty >= 1 && ty < IN_T - 1 && x < w && y < h) {
        double edge = s[ty][tx - 1] + s[ty][tx + 1] + s[ty - 1][tx] + s[ty + 1][tx];
        double corner = s[ty - 1][tx - 1] + s[ty - 1][tx + 1] + s[ty + 1][tx - 1] + s[ty + 1][tx + 1];
        out[y * w + x] = (4.0 * edge + corner - 20.0 * s[ty][tx]) / 6.0;
    }
}
