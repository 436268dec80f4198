// 1-D tiled convolution where the block is the input tile (PMPP 4th ed., 7.4 strategy
// 1): IN_TILE threads load IN_TILE cells, halo included, and the inner OUT_TILE compute.
#define MASK_WIDTH 5
#define IN_TILE 64
#define OUT_TILE (IN_TILE - MASK_WIDTH + 1)
__constant__ float F[MASK_WIDTH];

extern "C" __global__ void conv1d_in_tile(const float* N, float* P, int width) {
    __shared__ float N_s[IN_TILE];
    int i = blockIdx.x * OUT_TILE + threadIdx.x - MASK_WIDTH / 2;
    N_s[threadIdx.x] = (i >= 0 && i < width) ? N[i] : 0.0f;
    __syncthreads();
    int t = threadIdx.x - MASK_WIDTH / 2;
    if (i >= 0 && i < width && t >= 0 && t < OUT_TILE) {
        float p = 0.0f;
        for (int j = 0; j < MASK_WIDTH; ++j) p += F[j] * N_s[t + j];
        P[i] = p;
    }
}
