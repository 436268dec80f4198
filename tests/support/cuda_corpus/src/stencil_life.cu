// Conway's Game of Life on a torus with a shared tile: every thread loads its own cell
// (wrapped, so threads past the grid's edge load the cells that wrap around), the edge
// threads load the halo rows and columns, the corner threads the four corners.
#define T 16

__device__ __forceinline__ int wrap(int v, int n) { return ((v % n) + n) % n; }

extern "C" __global__ void life_tile(const unsigned char* cur, unsigned char* next, int h, int w) {
    __shared__ unsigned char s[T + 2][T + 2];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    int xl = wrap(x - 1, w), xc = wrap(x, w), xr = wrap(x + 1, w);
    int yu = wrap(y - 1, h), yc = wrap(y, h), yd = wrap(y + 1, h);
    s[ty][tx] = cur[yc * w + xc];
    if (threadIdx.x == 0) s[ty][0] = cur[yc * w + xl];
    if (threadIdx.x == T - 1) s[ty][T + 1] = cur[yc * w + xr];
    if (threadIdx.y == 0) s[0][tx] = cur[yu * w + xc];
    if (threadIdx.y == T - 1) s[T + 1][tx] = cur[yd * w + xc];
    if (threadIdx.x == 0 && threadIdx.y == 0) s[0][0] = cur[yu * w + xl];
    if (threadIdx.x == T - 1 && threadIdx.y == 0) s[0][T + 1] = cur[yu * w + xr];
    if (threadIdx.x == 0 && threadIdx.y == T - 1) s[T + 1][0] = cur[yd * w + xl];
    if (threadIdx.x == T - 1 && threadIdx.y == T - 1) s[T + 1][T + 1] = cur[yd * w + xr];
    __syncthreads();
    if (x >= w || y >= h) return;
    int alive = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx != 0 || dy != 0) alive += s[ty + dy][tx + dx];
    unsigned char c = s[ty][tx];
    next[y * w + x] = (alive == 3 || (c && alive == 2)) ? 1 : 0;
}
