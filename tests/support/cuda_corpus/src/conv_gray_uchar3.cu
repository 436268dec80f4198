// RGB to grayscale on packed uchar3 pixels (PMPP ch. 3 colorToGreyscale, with the BT.601
// weights in 8-bit fixed point as image libraries do).
extern "C" __global__ void rgb_to_gray_uchar3(const uchar3* rgb, unsigned char* gray, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int idx = y * w + x;
        uchar3 p = rgb[idx];
        gray[idx] = (unsigned char)((77 * p.x + 150 * p.y + 29 * p.z + 128) >> 8);
    }
}
