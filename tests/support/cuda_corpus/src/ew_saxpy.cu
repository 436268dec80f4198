// SAXPY with a grid-stride loop ("CUDA Pro Tip: Write Flexible Kernels with Grid-Stride
// Loops"): a fixed grid covers any n.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
