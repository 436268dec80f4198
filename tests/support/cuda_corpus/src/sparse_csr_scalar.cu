// SpMV, CSR, one thread per row (Bell & Garland's "scalar" kernel; PMPP 14.3).
extern "C" __global__ void spmv_csr_scalar(int m, const int* row_ptr, const int* col_idx, const float* val,
                                           const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float dot = 0.0f;
        int row_start = row_ptr[row];
        int row_end = row_ptr[row + 1];
        for (int jj = row_start; jj < row_end; jj++) dot += val[jj] * x[col_idx[jj]];
        y[row] = dot;
    }
}
