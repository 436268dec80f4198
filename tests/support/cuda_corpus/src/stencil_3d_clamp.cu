// A naive seven-point 3-D stencil on a 3-D grid of 3-D blocks: one thread per cell,
// neighbours clamped to the volume (replicated edges, a Neumann boundary).
extern "C" __global__ void stencil3d_clamped(const float* in, float* out, int nx, int ny, int nz, float c0, float c1) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    int zm = max(z - 1, 0), zp = min(z + 1, nz - 1);
    int plane = nx * ny;
    float sum = in[z * plane + y * nx + xm] + in[z * plane + y * nx + xp]
              + in[z * plane + ym * nx + x] + in[z * plane + yp * nx + x]
              + in[zm * plane + y * nx + x] + in[zp * plane + y * nx + x];
    out[z * plane + y * nx + x] = c0 * in[z * plane + y * nx + x] + c1 * sum;
}
