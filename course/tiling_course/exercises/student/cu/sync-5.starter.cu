#ifndef BLOCK_WIDTH
#define BLOCK_WIDTH 16
#endif

// Each block transposes its BLOCK_WIDTH x BLOCK_WIDTH tile of A in place: the element in
// row r, column c of the tile moves to row c, column r. A is height x width, row-major,
// both multiples of BLOCK_WIDTH; the grid has one block per tile. The threads first copy
// the tile into shared memory, one element each; then each thread writes back, at its
// own place, the element that another thread copied.
extern "C" __global__ void block_transpose(float* A, int width, int height) {
    __shared__ float tile[BLOCK_WIDTH][BLOCK_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int index = (blockIdx.y * BLOCK_WIDTH + ty) * width + blockIdx.x * BLOCK_WIDTH + tx;

    tile[ty][tx] = A[index];
    A[index] = tile[tx][ty];
}
