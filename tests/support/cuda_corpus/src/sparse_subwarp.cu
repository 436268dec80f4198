// SpMV, CSR, TPR threads per row (CUSP's spmv_csr_vector with THREADS_PER_VECTOR as a
// template parameter): every lane of the warp takes part in the segmented shuffles.
template <int TPR>
__global__ void spmv_csr_subwarp(int m, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                 const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int row = gid / TPR, lane = gid % TPR;
    float sum = 0.0f;
    if (row < m)
        for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += TPR) sum += val[j] * x[col_idx[j]];
    for (int off = TPR / 2; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off, TPR);
    if (row < m && lane == 0) y[row] = sum;
}
