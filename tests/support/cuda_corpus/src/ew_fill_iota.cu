// Writes its own linear index and block coordinates: a 2-D grid of 1-D blocks flattened
// with gridDim, as launch code for large 1-D problems does when gridDim.x would overflow.
extern "C" __global__ void fill_index(int* idx, float* val, const float* scale, int n) {
    int block = blockIdx.y * gridDim.x + blockIdx.x;
    int i = block * blockDim.x + threadIdx.x;
    if (i < n) {
        idx[i] = i;
        val[i] = scale[i % 5] * (float)blockIdx.x + (float)blockIdx.y;
    }
}
