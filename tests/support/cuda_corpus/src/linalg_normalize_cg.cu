// Normalize every row of a matrix to unit length: one 32-thread tile per row with
// cooperative groups, the sum of squares reduced with tile.shfl_xor.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void normalize_rows_cg(float* A, float* norms, int m, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * (blockDim.x / 32) + warp.meta_group_rank();
    if (row >= m) return;
    float ss = 0.0f;
    for (int j = warp.thread_rank(); j < n; j += warp.size()) {
        float v = A[row * n + j];
        ss += v * v;
    }
    for (int off = 16; off > 0; off >>= 1) ss += warp.shfl_xor(ss, off);
    float inv = ss > 0.0f ? rsqrtf(ss) : 0.0f;
    for (int j = warp.thread_rank(); j < n; j += warp.size()) A[row * n + j] *= inv;
    if (warp.thread_rank() == 0) norms[row] = sqrtf(ss);
}
