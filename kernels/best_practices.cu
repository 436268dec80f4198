// The CUDA C Best Practices Guide's three kernels for C = A B, where A is m x TILE_DIM,
// B is TILE_DIM x n and C is m x n (m and n multiples of TILE_DIM), with blocks of
// TILE_DIM x TILE_DIM threads. They differ only in what goes through shared memory.
#ifndef TILE_DIM
#define TILE_DIM 16
#endif

// Everything from global memory: a row of A and a column of B per thread.
extern "C" __global__ void simpleMultiply(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++)
        sum += a[row * TILE_DIM + i] * b[i * n + col];
    c[row * n + col] = sum;
}

// A's tile is read once, coalesced, into shared memory. Row ty of aTile is written and
// read only by the threads of row ty, which lie within one warp when TILE_DIM divides 32
// (a row of 24 threads, say, would straddle two warps), so a warp barrier suffices.
// The Guide's original has no barrier at all: that relied on a warp's threads running
// in lock step, which GPUs since Volta no longer guarantee.
extern "C" __global__ void coalescedMultiply(const float* a, const float* b, float* c, int n) {
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    __syncwarp();
    for (int i = 0; i < TILE_DIM; i++)
        sum += aTile[threadIdx.y][i] * b[i * n + col];
    c[row * n + col] = sum;
}

// B's tile through shared memory too: now a warp reads what other warps wrote, so the
// whole block must wait at __syncthreads().
extern "C" __global__ void sharedABMultiply(const float* a, const float* b, float* c, int n) {
    __shared__ float aTile[TILE_DIM][TILE_DIM], bTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    bTile[threadIdx.y][threadIdx.x] = b[threadIdx.y * n + col];
    __syncthreads();
    for (int i = 0; i < TILE_DIM; i++)
        sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
    c[row * n + col] = sum;
}
