"""scripts/fastcu_scorecard.py's own parts, without a checkout of fast.cu: what it leaves out of a
file (host definitions only, every line kept in place, so that messages name fast.cu's lines) and
its port of fast.cu's host-side Hilbert schedule (every tile once, along a Hilbert curve). The
kernels themselves run in the scorecard (logs/2026-12-06-fastcu-scorecard.md)."""
import fastcu_scorecard as scorecard
import numpy as np
import pytest

FILE = r'''namespace M9 {
template <int BlockMajorSize, int BlockMinorSize>
__host__ static inline CUtensorMap create_tensor_map(bf16* gmem_ptr, int global_height, int global_width) {
    CUtensorMap tma_map;
    assert(global_width % 64 == 0);
    return tma_map;
}
CUtensorMap d_tma_map_A;
int _prev_m=0, _prev_n=0, _prev_k=0;
__device__ void rotate(int n) { if (n) { n = 1; } }
template <int N> __global__ void kernel(int* out) { rotate(N); out[0] = N; }
void rot(int n, int& x, int& y, int rx, int ry) {
    if (ry == 0) { x = n - 1 - x; }
}
void runKernel9(int M, int N, int K, bf16 *A, bf16 *B, bf16 *C, int *DB) {
    d_tma_map_A = create_tensor_map<128, 64>(A, M, K);
    rot(4, M, N, 0, 0);
}
} // namespace M9
using M9::runKernel9;
'''


def test_the_host_definitions_are_left_out_and_the_lines_kept():
    code = scorecard.device_code(FILE)
    assert code.count("\n") == FILE.count("\n")
    assert [line for line in code.splitlines() if line.strip()] == [
        "namespace M9 {", "__device__ void rotate(int n) { if (n) { n = 1; } }",
        "template <int N> __global__ void kernel(int* out) { rotate(N); out[0] = N; }", "} // namespace M9"]
    assert FILE.splitlines()[9] == code.splitlines()[9]        # the device code where it was


@pytest.mark.parametrize("m,n", [(8, 8), (5, 7), (1, 3)])
def test_the_hilbert_schedule_holds_every_tile_once_along_the_curve(m, n):
    space = scorecard.hilbert(m, n, 64).reshape(64, scorecard.SPACE_LEN)
    tiles = [(int(v) >> 16, int(v) & 0xffff) for v in space.ravel() if v != -1]
    assert sorted(tiles) == [(x, y) for x in range(m) for y in range(n)]
    dim = 1 << (max(m, n) - 1).bit_length()
    walk = [scorecard.d2xy(dim, d) for d in range(dim * dim)]
    assert len(set(walk)) == dim * dim
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(walk, walk[1:]))   # a curve: unit steps
    assert np.all(space[:, 1:][space[:, :-1] == -1] == -1)        # each core's tiles first, then -1
