// SpMV, CSR, one warp per row (Bell & Garland's "vector" kernel), the partial sums
// combined with a __shfl_down_sync tree instead of the paper's volatile shared array.
extern "C" __global__ void spmv_csr_vector(int m, const int* row_ptr, const int* col_idx, const float* val,
                                           const float* x, float* y) {
    int lane = threadIdx.x & 31;
    int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= m) return;   // whole warps leave together
    float sum = 0.0f;
    for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += 32) sum += val[j] * x[col_idx[j]];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[row] = sum;
}
