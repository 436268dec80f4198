// 3 x 3 box blur of an RGBA image stored as uchar4 pixels, edges clamped, the average
// rounded to nearest (integer arithmetic per channel).
extern "C" __global__ void box_blur_uchar4(const uchar4* in, uchar4* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int r = 0, g = 0, b = 0, a = 0;
    for (int dy = -1; dy <= 1; ++dy) {
        int yy = min(max(y + dy, 0), h - 1);
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), w - 1);
            uchar4 p = in[yy * w + xx];
            r += p.x; g += p.y; b += p.z; a += p.w;
        }
    }
    out[y * w + x] = make_uchar4((r + 4) / 9, (g + 4) / 9, (b + 4) / 9, (a + 4) / 9);
}
