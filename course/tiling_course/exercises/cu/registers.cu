// The kernel of chapter 2's exercise on registers: the tiled kernel's phases, but each
// thread copies the values it will use into arrays of its own (registers, once the loops
// are unrolled) instead of into tiles its block shares. Width is a multiple of
// TILE_WIDTH; blocks of TILE_WIDTH x TILE_WIDTH threads, one element of P each.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_registers(const float* M, const float* N, float* P, int Width) {
    int row = blockIdx.y * TILE_WIDTH + threadIdx.y;
    int col = blockIdx.x * TILE_WIDTH + threadIdx.x;
    float sum = 0.0f;
    for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
        float m[TILE_WIDTH], n[TILE_WIDTH];  // this thread's own: no other thread can read them
        for (int k = 0; k < TILE_WIDTH; ++k) {
            m[k] = M[row * Width + ph * TILE_WIDTH + k];
            n[k] = N[(ph * TILE_WIDTH + k) * Width + col];
        }
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += m[k] * n[k];
    }
    P[row * Width + col] = sum;
}
