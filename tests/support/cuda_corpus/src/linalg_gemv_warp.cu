// y = A x with one warp per row: lanes stride along the row (coalesced), then a
// __shfl_xor_sync butterfly leaves the row's sum in every lane.
extern "C" __global__ void gemv_warp_per_row(const float* A, const float* x, float* y, int m, int n) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= m) return;
    float sum = 0.0f;
    for (int j = lane; j < n; j += 32) sum += A[(size_t)row * n + j] * x[j];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) y[row] = sum;
}
