// SpMV accumulate, COO format: y += A x, one nonzero per iteration of a grid-stride loop,
// atomicAdd into y (duplicate entries of the COO list add up).
extern "C" __global__ void spmv_coo_atomic(int nnz, const int* row_idx, const int* col_idx, const float* val,
                                           const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nnz; i += blockDim.x * gridDim.x) {
        int r = row_idx[i];
        float v = val[i] * x[col_idx[i]];
        atomicAdd(&y[r], v);
    }
}
