// PMPP 7.3: 1-D convolution with the mask in constant memory, written with centred
// offsets -HALF..HALF as many course solutions do.
#define MASK_WIDTH 7
#define HALF (MASK_WIDTH / 2)
__constant__ float Mc[MASK_WIDTH];

extern "C" __global__ void convolution_1D_const(const float* N, float* P, int Width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= Width) return;
    float Pvalue = 0.0f;
    for (int j = -HALF; j <= HALF; j++) {
        int gi = i + j;
        if (gi >= 0 && gi < Width) Pvalue += N[gi] * Mc[j + HALF];
    }
    P[i] = Pvalue;
}
