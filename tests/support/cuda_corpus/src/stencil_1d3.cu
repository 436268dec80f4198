// 1-D three-point weighted stencil, one output per thread; the tile and its two halo
// cells live in shared memory (the classic "stencil_1d" of CUDA training courses).
// Cells outside the domain count as zero. BLOCK comes from -DBLOCK=...
extern "C" __global__ void stencil1d_3pt(const float* in, float* out, float wl, float wc, float wr, int n) {
    __shared__ float tile[BLOCK + 2];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    int l = threadIdx.x + 1;
    tile[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x == 0) tile[0] = (g > 0 && g - 1 < n) ? in[g - 1] : 0.0f;
    if (threadIdx.x == BLOCK - 1) tile[BLOCK + 1] = (g + 1 < n) ? in[g + 1] : 0.0f;
    __syncthreads();
    if (g < n) out[g] = wl * tile[l - 1] + wc * tile[l] + wr * tile[l + 1];
}
