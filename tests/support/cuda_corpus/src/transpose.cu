// Matrix transposes after NVIDIA's transpose sample and Mark Harris's "An Efficient
// Matrix Transpose in CUDA C/C++": naive, coalesced through a shared tile, padded
// against bank conflicts, diagonal block reordering, TILE_DIM x BLOCK_ROWS thread
// blocks looping over the tile, batched along z, in place, and on complex float2.
// The matrices are rows x cols (row-major) in, cols x rows out; any sizes.

#ifndef TILE
#define TILE 16
#endif
#define TILE_DIM 32
#define BLOCK_ROWS 8

typedef float2 cplx;

extern "C" __global__ void transpose_naive(float* odata, const float* idata, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of the input
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of the input
    if (x < cols && y < rows) odata[x * rows + y] = idata[y * cols + x];
}

// Coalesced through a TILE x TILE tile, no padding (bank conflicts, still correct).
extern "C" __global__ void transpose_tile(float* odata, const float* idata, int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = idata[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;   // column of the output = row of the input
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols) odata[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

// The same tile padded to TILE + 1 columns.
extern "C" __global__ void transpose_padded(float* odata, const float* idata, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    unsigned int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    if (bx + tx < cols && by + ty < rows) tile[ty][tx] = idata[(by + ty) * cols + bx + tx];
    __syncthreads();
    if (by + tx < rows && bx + ty < cols) odata[(bx + ty) * rows + by + tx] = tile[tx][ty];
}

// Diagonal block reordering (the sample's transposeDiagonal): block (x, y) of the launch
// takes tile ((x + y) % gridDim.x, x) of a square grid, a bijection on any grid otherwise.
extern "C" __global__ void transpose_diagonal(float* odata, const float* idata, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int blockIdx_x, blockIdx_y;
    if (gridDim.x == gridDim.y) {
        blockIdx_y = blockIdx.x;
        blockIdx_x = blockIdx.x + blockIdx.y;
        blockIdx_x %= gridDim.x;
    } else {
        int bid = blockIdx.x + gridDim.x * blockIdx.y;
        blockIdx_y = bid % gridDim.y;
        blockIdx_x = ((bid / gridDim.y) + blockIdx_y) % gridDim.x;
    }
    int xIndex = blockIdx_x * TILE + threadIdx.x;
    int yIndex = blockIdx_y * TILE + threadIdx.y;
    if (xIndex < cols && yIndex < rows) tile[threadIdx.y][threadIdx.x] = idata[yIndex * cols + xIndex];
    __syncthreads();
    xIndex = blockIdx_y * TILE + threadIdx.x;
    yIndex = blockIdx_x * TILE + threadIdx.y;
    if (xIndex < rows && yIndex < cols) odata[yIndex * rows + xIndex] = tile[threadIdx.x][threadIdx.y];
}

// TILE_DIM x BLOCK_ROWS threads per 32 x 32 tile, each thread looping over the rows
// (Harris's transposeCoalesced), with guards for partial tiles.
extern "C" __global__ void transpose_block_rows(float* odata, const float* idata, int rows, int cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < rows && y + j < cols) odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// A batch of matrices along gridDim.z, the block-rows loop, through pointers to each
// matrix (`const float* in = idata + ...`).
extern "C" __global__ void transpose_batched(float* odata, const float* idata, int rows, int cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    const float* in = idata + (size_t)blockIdx.z * rows * cols;
    float* out = odata + (size_t)blockIdx.z * rows * cols;
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// In place, square n x n: the block above the diagonal swaps its tile with the mirror
// tile below; diagonal blocks transpose their own tile; blocks below return at once.
extern "C" __global__ void transpose_inplace(float* a, int n) {
    __shared__ float t1[TILE][TILE + 1];
    __shared__ float t2[TILE][TILE + 1];
    if (blockIdx.x < blockIdx.y) return;
    int tx = threadIdx.x, ty = threadIdx.y;
    int r1 = blockIdx.y * TILE + ty, c1 = blockIdx.x * TILE + tx;   // tile above the diagonal
    int r2 = blockIdx.x * TILE + ty, c2 = blockIdx.y * TILE + tx;   // its mirror
    if (r1 < n && c1 < n) t1[ty][tx] = a[r1 * n + c1];
    if (r2 < n && c2 < n) t2[ty][tx] = a[r2 * n + c2];
    __syncthreads();
    if (r2 < n && c2 < n) a[r2 * n + c2] = t1[tx][ty];
    if (r1 < n && c1 < n) a[r1 * n + c1] = t2[tx][ty];
}

// Conjugate transpose of a complex matrix stored as float2.
extern "C" __global__ void conj_transpose_cplx(cplx* out, const cplx* in, int rows, int cols) {
    __shared__ cplx tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) {
        tile[threadIdx.y][threadIdx.x].x = in[y * cols + x].x;
        tile[threadIdx.y][threadIdx.x].y = -in[y * cols + x].y;
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
