// Element-wise on a volume with a 3-D grid of 3-D blocks and a z-y-x flattened index.
extern "C" __global__ void axpby3d(const float* u, const float* v, float* out, float a, float b, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) {
        int idx = (z * ny + y) * nx + x;
        out[idx] = a * u[idx] + b * v[idx];
    }
}
