// PMPP (4th ed.) Fig. 7.15: tiled 2-D convolution using the caches for the halo: the
// block is the output tile, shared memory holds only the tile's own cells, halo cells are
// read from global memory.
#define TILE_DIM 16
#define R 1
__constant__ float K3[2 * R + 1][2 * R + 1];

extern "C" __global__ void conv2d_cached_halo(const float* N, float* P, int width, int height) {
    int col = blockIdx.x * TILE_DIM + threadIdx.x;
    int row = blockIdx.y * TILE_DIM + threadIdx.y;
    __shared__ float N_s[TILE_DIM][TILE_DIM];
    N_s[threadIdx.y][threadIdx.x] = (row < height && col < width) ? N[row * width + col] : 0.0f;
    __syncthreads();
    if (col < width && row < height) {
        float Pvalue = 0.0f;
        for (int fRow = 0; fRow < 2 * R + 1; fRow++) {
            for (int fCol = 0; fCol < 2 * R + 1; fCol++) {
                int ty = threadIdx.y - R + fRow, tx = threadIdx.x - R + fCol;
                if (ty >= 0 && ty < TILE_DIM && tx >= 0 && tx < TILE_DIM) {
                    Pvalue += K3[fRow][fCol] * N_s[ty][tx];
                } else {
                    int r = row - R + fRow, c = col - R + fCol;
                    if (r >= 0 && r < height && c >= 0 && c < width) Pvalue += K3[fRow][fCol] * N[r * width + c];
                }
            }
        }
        P[row * width + col] = Pvalue;
    }
}
