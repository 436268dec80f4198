// The instructor's solution of g3_transpose, for every variant: TILE_DIM and BLOCK_ROWS come
// from -D options, the operation from a #define the test puts before the source (OP_ROTATE_CW,
// OP_ROTATE_CCW, or nothing for the transpose). The tile's rows are padded by one word, so
// that a warp reading a column of it touches 32 different banks.
#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    int i = blockIdx.y * TILE_DIM + threadIdx.x;          // a row of in: a column of out
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        int c = blockIdx.x * TILE_DIM + threadIdx.y + j;   // a column of in: a row of out
        if (i < rows && c < cols) {
#if defined(OP_ROTATE_CW)
            out[c * rows + (rows - 1 - i)] = tile[threadIdx.x][threadIdx.y + j];
#elif defined(OP_ROTATE_CCW)
            out[(cols - 1 - c) * rows + i] = tile[threadIdx.x][threadIdx.y + j];
#else
            out[c * rows + i] = tile[threadIdx.x][threadIdx.y + j];
#endif
        }
    }
}
