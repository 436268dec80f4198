// SpMV, JDS (jagged diagonal storage): rows sorted by length, jagged diagonal k holds the
// k-th nonzero of every row that has one, stored contiguously; perm maps back (PMPP 14.5).
extern "C" __global__ void spmv_jds(int m, int num_diag, const int* perm, const int* jd_ptr, const int* col,
                                    const float* val, const float* x, float* y) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m) return;
    float sum = 0.0f;
    for (int k = 0; k < num_diag; ++k) {
        int start = jd_ptr[k], len = jd_ptr[k + 1] - start;
        if (r >= len) break;
        sum += val[start + r] * x[col[start + r]];
    }
    y[perm[r]] = sum;
}
