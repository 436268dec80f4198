// SpMV, CSR, thread per row, double precision, __restrict__ pointers and read-only
// loads of x through __ldg.
extern "C" __global__ void spmv_csr_ldg(int m, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                        const double* __restrict__ val, const double* __restrict__ x,
                                        double* __restrict__ y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    int start = row_ptr[row], end = row_ptr[row + 1];
    double acc = 0.0;
    for (int j = start; j < end; ++j) acc += val[j] * __ldg(&x[col_idx[j]]);
    y[row] = acc;
}
