"""Thread-block clusters on the CPU runtime: kernels/hopper.cu's clustered kernels
(matmul_clustered, matmul_async_store), unchanged, BF16 and FP16, plain and checked, on
awkward shapes against float64 NumPy of the rounded inputs, launched as
tiling_course.measure.bench_hopper launches them; the cluster's special registers as PTX defines them;
an arrival on another block's mbarrier; a multicast copy into both blocks; and the misuses
refused: a grid that is not a whole number of clusters, mapa or a multicast mask naming a
rank outside the cluster; and a block that exits while the other may still arrive on its barrier,
which plain mode runs as a GPU does (the arrival lands) and checked mode names whichever block
finishes first.
The cluster barrier waits only for threads that have not exited, as on a GPU."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cudacheck
from tests.support.hopper import HOPPER, OPTIONS, rounded
from tiling_course import hopper

CLUSTERED = ("matmul_clustered", "matmul_async_store")
FINAL_BARRIER = "    cluster_sync();                             // no block leaves while the other may signal it\n"


@pytest.fixture(scope="module")
def modules():
    return {(prec, check): cudacheck.RawModule(HOPPER, backend="cpu", check=check,
                                               options=OPTIONS + (("-DHOPPER_FP16",) if prec == "fp16" else ()))
            for prec in ("bf16", "fp16") for check in (False, True)}


def launch(module, kernel, M, N, clusters=132, P=None):
    """tiling_course.hopper's launch (bench_hopper.py's on a GPU): two blocks for each of
    whole_waves(pairs of tiles, clusters) clusters; matmul_async_store writes P (by default NaN, rows
    padded) through a tensor map of its own."""
    return hopper.launch(module, kernel, M, N, P, sms=2 * clusters)[0]


def inputs(rng, m, n, k, prec):
    return (rounded(rng.standard_normal((m, k), np.float32), prec),
            rounded(rng.standard_normal((k, n), np.float32), prec))


# (m, n, k, clusters): one tile of rows (the pair's lower tile past the matrix); three tiles of
# rows (an odd number: the last pair's lower tile past it) and a single cluster walking all pairs.
SHAPES = [(70, 300, 330, 132), (300, 520, 200, 1)]


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("prec", ["bf16", "fp16"])
@pytest.mark.parametrize("kernel", CLUSTERED)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_clustered_kernels_match_float64(modules, kernel, prec, check, shape, rng):
    m, n, k, clusters = shape
    (M, Mf), (N, Nf) = inputs(rng, m, n, k, prec)
    P = launch(modules[(prec, check)], kernel, M, N, clusters)
    exact = Mf.astype(np.float64) @ Nf.astype(np.float64)
    scale = np.abs(Mf.astype(np.float64)) @ np.abs(Nf.astype(np.float64))
    assert np.all(np.abs(P - exact) <= 2 * k * 2.0 ** -24 * scale), np.nanmax(np.abs(P - exact) / scale)


def test_the_tma_store_writes_nothing_outside_p(modules, rng):
    # P a view of a larger array: the boxes at its last rows and columns reach past it, into
    # memory the launch maps too (P's whole allocation), which keeps its NaN
    m, n, k = 70, 301, 64
    (M, Mf), (N, Nf) = inputs(rng, m, n, k, "bf16")
    whole = np.full((m + 64, 320), np.nan, np.float32)
    P = launch(modules[("bf16", False)], "matmul_async_store", M, N, P=whole[:m, :n])
    assert np.allclose(P, Mf.astype(np.float64) @ Nf.astype(np.float64), rtol=1e-5, atol=1e-5)
    outside = np.ones(whole.shape, bool)
    outside[:m, :n] = False
    assert np.isnan(whole[outside]).all()


REGISTERS = r'''
__device__ void registers(unsigned* out) {
    unsigned b = blockIdx.x + gridDim.x * blockIdx.y, v[11];
    asm("mov.u32 %0, %%cluster_ctarank; mov.u32 %1, %%cluster_nctarank; mov.u32 %2, %%clusterid.x; "
        "mov.u32 %3, %%clusterid.y; mov.u32 %4, %%nclusterid.x; mov.u32 %5, %%nclusterid.y; "
        "mov.u32 %6, %%cluster_ctaid.x; mov.u32 %7, %%cluster_ctaid.y; mov.u32 %8, %%cluster_nctaid.x; "
        "mov.u32 %9, %%cluster_nctaid.y; { .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %10, 1, 0, p; }"
        : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
          "=r"(v[9]), "=r"(v[10]));
    if (threadIdx.x == 0)
        for (int i = 0; i < 11; ++i) out[b * 11 + i] = v[i];
}
extern "C" __global__ void __cluster_dims__(2, 2, 1) regs(unsigned* out) { registers(out); }
extern "C" __global__ void plain_regs(unsigned* out) { registers(out); }'''


@pytest.mark.parametrize("kernel,cluster", [("regs", (2, 2)), ("plain_regs", (1, 1))])
def test_the_cluster_special_registers_are_as_ptx_defines_them(kernel, cluster):
    grid = (4, 4)
    out = np.zeros((4, 4, 11), np.uint32)   # [y][x]
    cudacheck.RawModule(REGISTERS, backend="cpu").get_function(kernel)(grid, (32,), (out,))
    cx, cy = cluster
    for y in range(4):
        for x in range(4):
            rank = x % cx + cx * (y % cy)
            assert out[y, x].tolist() == [rank, cx * cy, x // cx, y // cy, 4 // cx, 4 // cy, x % cx, y % cy, cx, cy,
                                          int(cluster != (1, 1))], (x, y)


PAIR = r'''
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ unsigned rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ void wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
// Each block's barrier expects one arrival, from the other block's thread 0.
extern "C" __global__ void __cluster_dims__(2, 1, 1) remote_arrive(unsigned* out, unsigned other) {
    __shared__ unsigned long long bar;
    unsigned b = smem_u32(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    if (threadIdx.x == 0) {
        asm volatile("{ .reg .b32 remote; mapa.shared::cluster.u32 remote, %0, %1; "
                     "mbarrier.arrive.shared::cluster.b64 _, [remote]; }" :: "r"(b), "r"(other ^ rank()) : "memory");
        wait(b, 0);
        out[blockIdx.x] = 1 + rank();
    }
    cluster_sync();
}
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
// Rank 0 multicasts one 16 x 16 box of the map into both blocks; each block expects its bytes.
extern "C" __global__ void __cluster_dims__(2, 1, 1) multicast(const __grid_constant__ TensorMap map,
                                                                unsigned short* out, unsigned short mask) {
    __shared__ unsigned long long bar;
    __shared__ __align__(128) unsigned short box[16 * 16];
    unsigned b = smem_u32(&bar), dst = smem_u32(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;" :: "r"(b) : "memory");
        if (rank() == 0)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                         ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                         :: "r"(dst), "l"(&map), "r"(16), "r"(0), "r"(b), "h"(mask) : "memory");
    }
    wait(b, 0);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) out[blockIdx.x * 256 + i] = box[i];
    cluster_sync();
}
// Rank 1's thread 0 arrives on rank 0's barrier, which rank 0 never waits on, after `delay`
// __syncthreads() of its block; rank 0 returns after `stay` of its own, so that either block may
// finish first. form 0: both blocks end with the cluster barrier; 1: they do not; 2: rank 1 arrives
// at the final cluster barrier before its remote arrival, and waits after it (split); 3: only rank 1
// passes a final cluster barrier (rank 0 exits, which completes the phase without waiting); 4: the
// arriving thread returns after a __syncthreads(), the others pass the final cluster barrier (which
// the __syncthreads() orders after its arrival); 5: the same without the __syncthreads().
extern "C" __global__ void __cluster_dims__(2, 1, 1) leaves_early(unsigned* out, int form, int delay, int stay) {
    __shared__ unsigned long long bar;
    unsigned b = smem_u32(&bar);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" :: "r"(b));
    cluster_sync();
    for (int i = 0; i < (rank() == 0 ? stay : delay); ++i)
        __syncthreads();
    if (form == 2 && rank() == 1)
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    if (threadIdx.x == 0 && rank() == 1)
        asm volatile("{ .reg .b32 remote; mapa.shared::cluster.u32 remote, %0, 0; "     // ARRIVE
                     "mbarrier.arrive.shared::cluster.b64 _, [remote]; }" :: "r"(b) : "memory");
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1 + rank();
    if (form == 4)
        __syncthreads();
    if ((form == 4 || form == 5) && threadIdx.x == 0 && rank() == 1)
        return;
    if (form == 0 || form == 4 || form == 5 || (form == 3 && rank() == 1))
        cluster_sync();
    else if (form == 2)
        asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}'''


@pytest.fixture(scope="module")
def pair():
    return {check: cudacheck.RawModule(PAIR, backend="cpu", check=check) for check in (False, True)}


def line_of(src, text):
    return next(i for i, s in enumerate(src.splitlines(), 1) if text in s)


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_block_arrives_on_the_other_blocks_mbarrier(pair, check):
    out = np.zeros(6, np.uint32)
    pair[check].get_function("remote_arrive")((6,), (64,), (out, np.uint32(1)))
    assert out.tolist() == [1, 2] * 3


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_multicast_copy_lands_in_every_block_of_the_mask(pair, check):
    A = np.arange(32 * 48, dtype=np.uint16).reshape(32, 48)
    out = np.zeros((4, 16, 16), np.uint16)
    tmap = cudacheck.tensor_map_2d(A, 16, 16, swizzle=0)
    pair[check].get_function("multicast")((4,), (32,), (tmap, out, np.uint16(3)))
    assert (out == A[0:16, 16:32]).all()


def test_a_grid_that_is_not_a_whole_number_of_clusters_is_refused(pair):
    with pytest.raises(cudacheck.LaunchConfigError,
                       match=r"clusters of \(2, 1, 1\) blocks .* gridDim\.x = 3 is not a multiple of 2; CUDA refuses "
                             r"the launch \(cudaErrorInvalidClusterSize, CuPy's CUDA_ERROR_INVALID_CLUSTER_SIZE"):
        pair[False].get_function("remote_arrive")((3,), (64,), (np.zeros(3, np.uint32), np.uint32(1)))


def test_mapa_to_a_rank_outside_the_cluster_is_refused(pair):
    with pytest.raises(cudacheck.InvalidOperandError, match=r"mapa\.shared::cluster .* for CTA rank 2: its cluster "
                                                            r"has 2 block\(s\), ranks 0 to 1") as e:
        pair[False].get_function("remote_arrive")((2,), (64,), (np.zeros(2, np.uint32), np.uint32(2)))
    assert e.value.line == line_of(PAIR, "mapa.shared::cluster.u32 remote, %0, %1")


def test_a_multicast_mask_naming_a_rank_outside_the_cluster_is_refused(pair):
    tmap = cudacheck.tensor_map_2d(np.zeros((32, 48), np.uint16), 16, 16, swizzle=0)
    with pytest.raises(cudacheck.InvalidOperandError, match=r"multicast mask 0x5, whose bits name ranks outside its "
                                                            r"cluster of 2 block") as e:
        pair[False].get_function("multicast")((2,), (32,), (tmap, np.zeros((2, 16, 16), np.uint16), np.uint16(5)))
    assert e.value.line == line_of(PAIR, '"cp.async.bulk.tensor.2d.shared::cluster')


# (blocks, delay, stay): rank 0 finishes long before rank 1's arrival, or long after it lands
SCHEDULES = [(2, 0, 0), (2, 12, 0), (2, 0, 12), (6, 3, 9), (16, 9, 1)]


def leaves_early(module, form, schedule, threads=32):
    blocks, delay, stay = schedule
    out = np.zeros(blocks * threads, np.uint32)
    module.get_function("leaves_early")((blocks,), (threads,), (out, np.int32(form), np.int32(delay),
                                                                 np.int32(stay)))
    return out


@pytest.mark.parametrize("form", [0, 4], ids=["all-threads", "arriving-thread-met-at-syncthreads"])
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_final_cluster_barrier_orders_a_remote_arrival_before_the_exit(pair, check, form, schedule):
    out = leaves_early(pair[check], form, schedule)
    assert out.tolist() == np.repeat(np.tile([1, 2], schedule[0] // 2), 32).tolist()


UNORDERED = {"form": [1, 2, 3, 5], "ids": ["no-final-barrier", "arrive-before-access", "target-skips-it",
                                           "arriving-thread-leaves"]}


@pytest.mark.parametrize("form", UNORDERED["form"], ids=UNORDERED["ids"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_plain_mode_lands_an_arrival_on_a_block_that_has_exited_and_warns(pair, form, schedule):
    # A GPU lands it or fails the launch, by timing; plain mode computes the landed result, and
    # says when the schedule it ran made the arrival late.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = leaves_early(pair[False], form, schedule)
    assert out.tolist() == np.repeat(np.tile([1, 2], schedule[0] // 2), 32).tolist()
    for w in caught:
        assert issubclass(w.category, cudacheck.ClusterExitWarning), w
        assert w.message.line == line_of(PAIR, "// ARRIVE") + 1 and "after block" in str(w.message)


def test_plain_mode_warns_of_a_late_arrival(pair):
    # rank 0 returns at once and rank 1 arrives after 12 __syncthreads(): the arrival comes late
    with pytest.warns(cudacheck.ClusterExitWarning, match=r"thread \(0, 0, 0\) of block \(1, 0, 0\) reached block "
                                                          r"\(0, 0, 0\) \(rank 0 of its cluster\) with mbarrier\.arrive"
                                                          r"\.shared::cluster at line \d+ after block \(0, 0, 0\) had "
                                                          r"exited") as caught:
        out = leaves_early(pair[False], 1, (2, 12, 0))
    assert out.tolist() == [1] * 32 + [2] * 32
    assert caught[0].message.target_block == (0, 0, 0) and caught[0].message.block == (1, 0, 0)
    assert "cluster.sync()" in str(caught[0].message)


def test_an_arrival_a_cluster_barrier_orders_warns_of_nothing(pair):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        leaves_early(pair[False], 0, (2, 0, 12))


@pytest.mark.parametrize("form,released,waited", [(1, -1, 1), (2, -1, 1), (3, 2, 1), (5, -1, 2)],
                         ids=["no-final-barrier", "arrive-before-access", "target-skips-it", "arriving-thread-leaves"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_checked_mode_names_a_remote_arrival_no_cluster_barrier_orders_before_the_exit(pair, form, released,
                                                                                        waited, schedule):
    # the same finding whichever block finishes first: the cluster barrier's phases decide
    says = (r"(?s)thread \(0, 0, 0\) of block \(1, 0, 0\) arrives on an mbarrier of block \(0, 0, 0\) \(rank 0 of its "
            r"cluster\).*barrier\.cluster\.arrive; barrier\.cluster\.wait;")
    with pytest.raises(cudacheck.ClusterExitRaceError, match=says) as e:
        leaves_early(pair[True], form, schedule)
    assert e.value.line == line_of(PAIR, "// ARRIVE") + 1
    assert (e.value.block, e.value.target_block, e.value.thread) == ((1, 0, 0), (0, 0, 0), (0, 0, 0))
    assert (e.value.released, e.value.waited) == (released, waited)


def test_the_clustered_kernel_without_its_final_cluster_barrier_is_named_checked(rng):
    src = HOPPER.replace(FINAL_BARRIER, "")
    assert src != HOPPER
    (M, Mf), (N, Nf) = inputs(rng, 70, 300, 330, "bf16")
    with warnings.catch_warnings():   # plain: right, with a ClusterExitWarning where an arrival came late
        warnings.simplefilter("ignore", cudacheck.ClusterExitWarning)
        P = launch(cudacheck.RawModule(src, backend="cpu", options=OPTIONS), "matmul_clustered", M, N)
    exact = Mf.astype(np.float64) @ Nf.astype(np.float64)
    scale = np.abs(Mf.astype(np.float64)) @ np.abs(Nf.astype(np.float64))
    assert np.all(np.abs(P - exact) <= 2 * 330 * 2.0 ** -24 * scale), np.nanmax(np.abs(P - exact) / scale)
    with pytest.raises(cudacheck.ClusterExitRaceError, match=r"mbarrier\.arrive\.shared::cluster at line \d+, and "
                                                             r"nothing orders that arrival before block"):
        launch(cudacheck.RawModule(src, backend="cpu", options=OPTIONS, check=True), "matmul_clustered", M, N)


def test_a_whole_program_that_launches_a_clustered_kernel_is_refused():
    src = r'''
#include <cstdio>
__global__ void __cluster_dims__(2, 1, 1) k(int* x) { x[blockIdx.x] = 1; }
int main() {
    int* d;
    cudaMalloc(&d, 2 * sizeof(int));
    k<<<2, 32>>>(d);
    cudaFree(d);
    return 0;
}'''
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=r"kernel `k` runs in thread-block clusters"):
        cudacheck.run_program(src, backend="cpu")


def test_checked_mode_orders_the_blocks_threads_by_the_cluster_barrier():
    # thread 0's write, everyone's read and thread 5's write are ordered by the cluster barrier
    # alone (no __syncthreads): no race
    src = r'''
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(float* out) {
    __shared__ float x;
    if (threadIdx.x == 0) x = 1.0f + blockIdx.x;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    if (threadIdx.x == 5) x = 0.0f;
}'''
    out = np.zeros(128, np.float32)
    cudacheck.RawModule(src, backend="cpu", check=True).get_function("k")((2,), (64,), (out,))
    assert out.tolist() == [1.0] * 64 + [2.0] * 64


EXITS = r'''
// Threads that return before the cluster barrier: a GPU's barrier.cluster.wait waits only for the
// cluster's threads that have not exited. 1: the rank-1 block returns; 2: half of each block's
// threads return; 3: the rank-1 block waits without arriving (its wait returns at once) and then
// exits; 4: both blocks pass one barrier, then the rank-1 block returns before a second.
extern "C" __global__ void __cluster_dims__(2, 1, 1) exits(float* x, int variant) {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (variant == 1 && rank == 1) return;
    if (variant == 2 && t >= 32) return;
    if (variant == 3 && rank == 1) {
        asm volatile("barrier.cluster.wait;" ::: "memory");
        x[i] = 2.0f;
        return;
    }
    if (variant == 4) {
        asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
        if (rank == 1) { x[i] = 3.0f; return; }
    }
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    x[i] = 1.0f;
}'''


def exits_expected(variant, clusters):
    rank, t = np.divmod(np.arange(128), 64)
    one = {0: np.ones(128), 1: rank == 0, 2: t < 32, 3: np.where(rank == 0, 1, 2), 4: np.where(rank == 0, 1, 3)}
    return np.tile(np.asarray(one[variant], np.float32), clusters)


@pytest.mark.parametrize("variant", range(5))
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_threads_that_exit_are_not_waited_for_at_the_cluster_barrier(variant, check):
    # three clusters, so that a group of workers takes the barrier from one cluster to the next
    x = np.zeros(3 * 128, np.float32)
    cudacheck.RawModule(EXITS, backend="cpu", check=check).get_function("exits")((6,), (64,), (x, np.int32(variant)))
    np.testing.assert_array_equal(x, exits_expected(variant, 3))


@pytest.mark.gpu
@pytest.mark.parametrize("variant", range(5))
def test_the_gpu_does_not_wait_for_exited_threads_either(variant):
    import cupy
    x = cupy.zeros(3 * 128, cupy.float32)
    cudacheck.RawModule(EXITS, backend="gpu").get_function("exits")((6,), (64,), (x, np.int32(variant)))
    np.testing.assert_array_equal(x.get(), exits_expected(variant, 3))


STALLS = r'''
// A block that is its own cluster: warp 0 waits at the cluster barrier for warp 1, which polls a
// flag that warp 0 sets only after the barrier.
extern "C" __global__ void waits_for_a_poller(volatile int* flag) {
    if (threadIdx.x < 32) {
        asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");   // CLUSTER WAIT
        flag[0] = 1;
    } else {
        while (flag[0] == 0) {}
    }
}
// Half of the rank-1 block waits at a named barrier the other half never reaches; every other
// thread of the cluster waits at the cluster barrier for those 32.
extern "C" __global__ void __cluster_dims__(2, 1, 1) pair_stalls(float* x) {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (rank == 1 && threadIdx.x < 32) asm volatile("bar.sync 1, 64;" ::: "memory");
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_wait_at_the_cluster_barrier_that_nothing_completes_is_named(check):
    with pytest.raises(cudacheck.ForwardProgressError) as e:
        cudacheck.RawModule(STALLS, backend="cpu", check=check).get_function("waits_for_a_poller")(
            (1,), (64,), (np.zeros(1, np.int32),))
    line = line_of(STALLS, "CLUSTER WAIT")
    assert e.value.line == line and e.value.thread == (0, 0, 0)
    msg = str(e.value)
    assert (f"waits at the cluster barrier on line {line}, where 32 of the cluster's 64 threads have arrived and 0 "
            "have exited; the barrier waits for 32 more that will not arrive") in msg
    assert f"threads with threadIdx.x < 32 wait at the cluster barrier on line {line}; the others poll memory" in msg


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_blocks_of_a_cluster_that_wait_for_each_other_are_reported_not_timed_out(check):
    # Each block's worker, taking turns with the other's, once counted the other's turns as its own
    # progress: the launch ran into the time limit instead. Either block's report names its wait.
    with pytest.raises(cudacheck.ForwardProgressError, match=r"cannot finish: its thread \(0, 0, 0\) waits at "
                                                             r"(named barrier 1|the cluster barrier)"):
        cudacheck.RawModule(STALLS, backend="cpu", check=check).get_function("pair_stalls")(
            (2,), (64,), (np.zeros(128, np.float32),))


NAMED = r'''
// Warps 0-1 and warps 2-3 each pass values through shared memory, meeting at their own named
// barrier (1 and 2), never at the block's.
extern "C" __global__ void pairs_of_warps(float* out) {
    __shared__ float x[128];
    unsigned t = threadIdx.x, half = t / 64, a = (unsigned)__cvta_generic_to_shared(&x[t]);
    asm volatile("st.shared.f32 [%0], %1;" :: "r"(a), "f"(float(t)) : "memory");
    asm volatile("bar.sync %0, 64;" :: "r"(1 + half) : "memory");
    out[t] = x[half * 64 + (t + 1) % 64];
    asm volatile("barrier.sync.aligned %0, 64;" :: "r"(1 + half) : "memory");
    x[t] = 0.0f;
}'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_named_barriers_order_their_own_threads(check):
    out = np.zeros(128, np.float32)
    cudacheck.RawModule(NAMED, backend="cpu", check=check).get_function("pairs_of_warps")(1, 128, (out,))
    t = np.arange(128)
    assert out.tolist() == (t // 64 * 64 + (t + 1) % 64).tolist()


# How the failed launch reaches Python: CuPy raises the driver's code, CUDA_ERROR_LAUNCH_FAILED
# ("unspecified launch failure"; the runtime API's cudaErrorLaunchFailure).
LAUNCH_FAILED = "CUDA_ERROR_LAUNCH_FAILED"


def gpu_launch(kernel, blocks, *ints):
    """Launch `kernel` of PAIR on the GPU in a fresh process (a kernel that faults poisons its
    process's CUDA context): its output, or the error's first line."""
    code = (f"import numpy as np, cupy, cudacheck, sys\n"
            f"m = cudacheck.RawModule(sys.stdin.read(), backend='gpu', options=('-arch=sm_90a',))\n"
            f"out = cupy.zeros({blocks} * 32, cupy.uint32)\n"
            f"m.get_function('{kernel}')(({blocks},), (32,), (out, *[np.int32(v) for v in {list(ints)}]))\n"
            f"cudacheck.synchronize()\nprint(out.get().tolist())\n")
    run = subprocess.run([sys.executable, "-c", code], input=PAIR, capture_output=True, text=True, timeout=120)
    return run.stdout.strip() if run.returncode == 0 else (run.stderr.strip().splitlines() or ["?"])[-1]


@pytest.mark.gpu
@pytest.mark.parametrize("form", range(6))
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_gpu_either_lands_an_arrival_or_fails_the_launch(form, schedule):
    """On an H100 or H200: a remote arrival that a cluster barrier orders before its target's exit
    (forms 0 and 4) always lands; one that nothing orders lands or, coming after the exit, fails
    the launch, never a wrong result. Form 2 with no delays failed it on an H100 (2026-12-06): rank
    0's wait, with no arrival of its own, returns at once, and rank 0 exits before rank 1 arrives."""
    blocks = schedule[0]
    got = gpu_launch("leaves_early", blocks, form, *schedule[1:])
    right = str(np.repeat(np.tile([1, 2], blocks // 2), 32).tolist())
    if form in (0, 4):
        assert got == right
    else:
        assert got == right or LAUNCH_FAILED in got, got
    if (form, schedule) == (2, (2, 0, 0)):
        assert LAUNCH_FAILED in got, got
