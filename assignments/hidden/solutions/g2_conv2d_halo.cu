// The instructor's solution of g2_conv2d_halo, for every variant: TILE and RADIUS come from
// -D options, the border rule from a #define the test puts before the source (BORDER_CLAMP,
// or nothing for zero). A student writes only their own rule.
#ifndef TILE
#define TILE 8
#endif
#ifndef RADIUS
#define RADIUS 1
#endif
#define SIDE (TILE + 2 * RADIUS)

extern "C" __global__ void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width) {
    __shared__ float tile[SIDE][SIDE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int top = blockIdx.y * TILE - RADIUS, left = blockIdx.x * TILE - RADIUS;
    for (int e = ty * TILE + tx; e < SIDE * SIDE; e += TILE * TILE) {
        int r = e / SIDE, c = e % SIDE;
        int gr = top + r, gc = left + c;
#if defined(BORDER_CLAMP)
        gr = min(max(gr, 0), height - 1);
        gc = min(max(gc, 0), width - 1);
        tile[r][c] = in[gr * width + gc];
#else
        tile[r][c] = (gr >= 0 && gr < height && gc >= 0 && gc < width) ? in[gr * width + gc] : 0.0f;
#endif
    }
    __syncthreads();
    int i = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
    if (i < height && j < width) {
        float sum = 0.0f;
        for (int a = 0; a <= 2 * RADIUS; ++a)
            for (int b = 0; b <= 2 * RADIUS; ++b)
                sum += mask[a * (2 * RADIUS + 1) + b] * tile[ty + a][tx + b];
        out[i * width + j] = sum;
    }
}
