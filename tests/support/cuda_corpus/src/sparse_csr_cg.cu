// SpMV, CSR, one 32-thread tile per row with cooperative groups, in double precision.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void spmv_csr_tile(int m, const int* row_ptr, const int* col_idx, const double* val,
                                         const double* x, double* y) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int row = blockIdx.x * (blockDim.x / 32) + tile.meta_group_rank();
    if (row >= m) return;
    double sum = 0.0;
    for (int j = row_ptr[row] + tile.thread_rank(); j < row_ptr[row + 1]; j += tile.size())
        sum += val[j] * x[col_idx[j]];
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) sum += tile.shfl_down(sum, offset);
    if (tile.thread_rank() == 0) y[row] = sum;
}
