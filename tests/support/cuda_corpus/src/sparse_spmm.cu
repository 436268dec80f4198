// CSR times a dense row-major matrix (SpMM): one block per sparse row, the block's
// threads stride over the dense columns so that reads of B and writes of C coalesce.
extern "C" __global__ void spmm_csr_rowblock(int m, int k, const int* row_ptr, const int* col_idx, const float* val,
                                             const float* B, float* C) {
    int row = blockIdx.x;
    if (row >= m) return;
    int start = row_ptr[row], end = row_ptr[row + 1];
    for (int c = threadIdx.x; c < k; c += blockDim.x) {
        float acc = 0.0f;
        for (int j = start; j < end; ++j) acc += val[j] * B[col_idx[j] * k + c];
        C[row * k + c] = acc;
    }
}
