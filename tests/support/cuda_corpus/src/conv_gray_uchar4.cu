// RGBA to grayscale on uchar4 pixels with float weights and a grid-stride loop; the
// alpha channel is ignored. Writes a float image and a rounded 8-bit one.
extern "C" __global__ void rgba_to_gray_uchar4(const uchar4* rgba, float* lum, unsigned char* gray, int npix) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < npix; i += blockDim.x * gridDim.x) {
        uchar4 p = rgba[i];
        float l = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
        lum[i] = l;
        gray[i] = (unsigned char)min(255, __float2int_rn(l));
    }
}
