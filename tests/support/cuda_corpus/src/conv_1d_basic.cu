// PMPP 7.2: the basic 1-D convolution, the mask passed as a pointer parameter. The book's
// listing writes P[i] without a guard; this one has it.
extern "C" __global__ void convolution_1D_basic_kernel(const float* N, const float* M, float* P, int Mask_Width, int Width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float Pvalue = 0;
    int N_start_point = i - (Mask_Width / 2);
    for (int j = 0; j < Mask_Width; j++) {
        if (N_start_point + j >= 0 && N_start_point + j < Width) {
            Pvalue += N[N_start_point + j] * M[j];
        }
    }
    if (i < Width) P[i] = Pvalue;
}
