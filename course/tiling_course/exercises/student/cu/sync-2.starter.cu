#ifndef TILE_DIM
#define TILE_DIM 16
#endif

// B's tile through shared memory too, ordered by a warp barrier.
extern "C" __global__ void sharedABMultiply(const float* a, const float* b, float* c, int n) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], bTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    bTile[threadIdx.y][threadIdx.x] = b[threadIdx.y * n + col];
    __syncwarp();
    for (int i = 0; i < TILE_DIM; i++)
        sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
    c[row * n + col] = sum;
}
