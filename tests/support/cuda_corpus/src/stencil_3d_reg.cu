// PMPP (4th ed.) section 8.5: seven-point 3-D stencil, thread coarsening in z with
// register tiling. Only the current plane lives in shared memory; the planes below and
// above stay in registers. The block is an 8 x 8 input tile that produces 6 x 6 outputs
// for OUT_TILE_DIM consecutive planes. The coefficients are in constant memory.
#define IN_TILE_DIM 8
#define OUT_TILE_DIM 6
__constant__ float coef[7];

extern "C" __global__ void stencil3d_regtile(const float* in, float* out, int nx, int ny, int nz) {
    int iStart = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];
    float inPrev = 0.0f, inCurr = 0.0f, inNext = 0.0f;
    bool jk = j >= 0 && j < ny && k >= 0 && k < nx;
    if (iStart - 1 >= 0 && iStart - 1 < nz && jk) inPrev = in[(iStart - 1) * ny * nx + j * nx + k];
    if (iStart < nz && jk) inCurr = in[iStart * ny * nx + j * nx + k];
    inCurr_s[threadIdx.y][threadIdx.x] = inCurr;
    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        inNext = 0.0f;
        if (i + 1 < nz && jk) inNext = in[(i + 1) * ny * nx + j * nx + k];
        __syncthreads();
        if (i >= 1 && i < nz - 1 && j >= 1 && j < ny - 1 && k >= 1 && k < nx - 1) {
            if (threadIdx.y >= 1 && threadIdx.y < IN_TILE_DIM - 1 && threadIdx.x >= 1 && threadIdx.x < IN_TILE_DIM - 1) {
                out[i * ny * nx + j * nx + k] = coef[0] * inCurr
                                              + coef[1] * inCurr_s[threadIdx.y][threadIdx.x - 1]
                                              + coef[2] * inCurr_s[threadIdx.y][threadIdx.x + 1]
                                              + coef[3] * inCurr_s[threadIdx.y - 1][threadIdx.x]
                                              + coef[4] * inCurr_s[threadIdx.y + 1][threadIdx.x]
                                              + coef[5] * inPrev
                                              + coef[6] * inNext;
            }
        }
        __syncthreads();
        inPrev = inCurr;
        inCurr = inNext;
        inCurr_s[threadIdx.y][threadIdx.x] = inNext;
    }
}
