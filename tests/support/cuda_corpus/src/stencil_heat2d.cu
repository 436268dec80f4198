// One explicit step of the 2-D heat equation, five-point Laplacian. The block's tile and
// its one-cell halo are loaded cooperatively by a strided loop over the flattened tile;
// cells on the domain's boundary keep their values.
#define BX 16
#define BY 8

extern "C" __global__ void heat2d_step(const float* u, float* un, int nx, int ny, float alpha) {
    __shared__ float tile[BY + 2][BX + 2];
    int x0 = blockIdx.x * BX - 1, y0 = blockIdx.y * BY - 1;
    int tid = threadIdx.y * BX + threadIdx.x;
    for (int k = tid; k < (BY + 2) * (BX + 2); k += BX * BY) {
        int ty = k / (BX + 2), tx = k % (BX + 2);
        int gx = x0 + tx, gy = y0 + ty;
        tile[ty][tx] = (gx >= 0 && gx < nx && gy >= 0 && gy < ny) ? u[gy * nx + gx] : 0.0f;
    }
    __syncthreads();
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    float c = tile[ly][lx];
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        un[y * nx + x] = c;
        return;
    }
    un[y * nx + x] = c + alpha * (tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] + tile[ly + 1][lx] - 4.0f * c);
}
