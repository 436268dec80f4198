"""scripts/fastcu_scorecard.py's own parts, without a checkout of fast.cu: what it leaves out of a
file (host definitions only, every line kept in place, so that messages name fast.cu's lines) and
its port of fast.cu's host-side Hilbert schedule (every tile once, along a Hilbert curve), and its
fixes of the two defects checked mode names in fast.cu (each at its site only, every line kept; on a
small kernel with both, each named in turn and the fixed copy passing). The
kernels themselves run in the scorecard (logs/2026-12-06-fastcu-scorecard.md)."""
import fastcu_scorecard as scorecard
import numpy as np
import pytest

import cudacheck

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


# fast.cu's two defects in small: rank 1 arrives on rank 0's mbarrier and nothing orders that before
# rank 0 exits; each block's threads write a tile of C with ordinary stores that a TMA store then reads,
# after a named barrier and no proxy fence. store_async and tensorMapC are named as in fast.cu, whose
# fixes the scorecard finds by them.
TWO_DEFECTS = r'''
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ void store_async(const void* map, float* src, int col, int row) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(map), "r"(col), "r"(row), "r"(smem_u32(src)) : "memory");
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) tiles(const __grid_constant__ TensorMap tensorMapC, int delay) {
    __shared__ unsigned long long bar;
    __shared__ __align__(128) float sC[16 * 16];
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive;\n" : :);
    asm volatile("barrier.cluster.wait;\n" : :);
    for (int i = 0; i < (rank == 1 ? delay : 0); ++i)
        __syncthreads();
    if (threadIdx.x == 0 && rank == 1)
        asm volatile("{ .reg .b32 remote; mapa.shared::cluster.u32 remote, %0, 0; "
                     "mbarrier.arrive.shared::cluster.b64 _, [remote]; }" :: "r"(smem_u32(&bar)) : "memory");
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        sC[i] = blockIdx.x * 256 + i;
    asm volatile("bar.sync 1, 64;\n");
    if (threadIdx.x == 0) {
        store_async(&tensorMapC, sC, 0, 16 * blockIdx.x);
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
'''


def test_each_fix_changes_only_its_site_and_keeps_every_line():
    other = '__global__ void plain(int* x) { if (x) { x[0] = 1; } }\n'
    text = other + TWO_DEFECTS
    barrier = scorecard.end_with_cluster_barrier(text)
    fence = scorecard.fence_before_store(text)
    for fixed in (barrier, fence):
        assert fixed.count("\n") == text.count("\n")
    changed = [(a, b) for a, b in zip(text.splitlines(), barrier.splitlines()) if a != b]
    assert changed == [("}", 'asm volatile("barrier.cluster.arrive;\\n" : :); '
                             'asm volatile("barrier.cluster.wait;\\n" : :); }')]   # the clustered kernel's end only
    changed = [(a, b) for a, b in zip(text.splitlines(), fence.splitlines()) if a != b]
    assert changed == [('    asm volatile("bar.sync 1, 64;\\n");',
                        '    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); '
                        'asm volatile("bar.sync 1, 64;\\n");')]


def test_a_store_with_no_named_barrier_before_it_is_named():
    with pytest.raises(ValueError, match="no bar.sync before the TMA store on line 2"):
        scorecard.fence_before_store("__device__ void f() {\n    store_async(&tensorMapC, s, 0, 0);\n}\n")


@pytest.mark.parametrize("blocks,delay", [(2, 0), (4, 6)])
def test_checked_mode_names_each_defect_and_the_fixed_copy_passes(blocks, delay):
    """The scorecard's ladder on the small kernel: as written, the proxy fence's absence is named
    first (at the store), then, with that fixed, the remote arrival no cluster barrier orders before
    the exit (at the cluster's end); with both fixed, checked mode passes and C is each block's tile."""
    text, named = TWO_DEFECTS, []
    while True:
        C = np.zeros((16 * blocks, 16), np.float32)
        kernel = cudacheck.RawModule(text, backend="cpu", check=True).get_function("tiles")
        try:
            kernel((blocks,), (64,), (cudacheck.tensor_map_2d(C, 16, 16, swizzle=0), np.int32(delay)))
        except cudacheck.KernelError as e:
            named.append(type(e).__name__)
            text = scorecard.FIXES[type(e).__name__].apply(text)
            continue
        break
    assert named == ["ProxyFenceError", "ClusterExitRaceError"]
    assert C.ravel().tolist() == list(range(16 * 16 * blocks))
