// SpMV, ELL format stored column-major (entry k of row r at k * m + r) so that the threads
// of a warp read consecutive words; padding entries have column -1 (PMPP 14.4).
extern "C" __global__ void spmv_ell(int m, int K, const int* col, const float* val, const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float dot = 0.0f;
        for (int k = 0; k < K; ++k) {
            int c = col[k * m + row];
            if (c >= 0) dot += val[k * m + row] * x[c];
        }
        y[row] = dot;
    }
}
