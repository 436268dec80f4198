"""Checked mode's proxy fences (cpu/src/kc_check_async.cpp): bytes threads wrote with ordinary
stores (the generic proxy) that a TMA store or a wgmma then reads (the async proxy) need a
fence.proxy.async of each writer after its writes and before the barrier that hands them over
(PTX ISA: "Accessing the same memory location across multiple proxies needs a cross-proxy
fence"); without one, ProxyFenceError names the write's line and the store's or wgmma's. Small
hand-written kernels, each correct one beside its wrong ones; the verdict is the same under the
forward and the reverse schedule (a writer that fences for its next box before the store of
this one is issued neither hides nor fakes a missing fence)."""
import re

import numpy as np
import pytest

import cudacheck
from tests.support.hopper import STORE_D, WGMMA_DESCRIPTORS, WGMMA_OPERANDS, bf16

SCHEDULES = ["forward", "reverse"]

# 128 threads write a 32 x 64 float box, 16 elements each, with st.shared, and thread 0 stores
# it with the TMA. mode 0: each thread fences, then __syncthreads. 1: no fence. 2: the fence
# after the __syncthreads. 3: as 0 through a named barrier (bar.sync 1, 128). 4: as 2 through it.
# 5: thread 5 alone does not fence. 6: each thread's fence is fence.proxy.async.global, which
# orders nothing in shared memory. 7: fence.proxy.async (every state space). 8: the one-way
# fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster. 9: only its acquire
# form (async-proxy writes before generic accesses), which leaves the box unfenced.
STORE_SRC = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void store_box(const __grid_constant__ TensorMap map, int mode) {
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    for (int i = 0; i < 16; ++i) {
        unsigned a = base + 4 * (threadIdx.x * 16 + i);
        asm volatile("st.shared.f32 [%0], %1;" :: "r"(a), "f"(float(threadIdx.x * 16 + i)) : "memory");   // WRITE
    }
    if (mode == 0 || mode == 3 || (mode == 5 && threadIdx.x != 5))
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // FENCE
    if (mode == 6)
        asm volatile("fence.proxy.async.global;" ::: "memory");   // GLOBAL FENCE
    if (mode == 7)
        asm volatile("fence.proxy.async;" ::: "memory");
    if (mode == 8)
        asm volatile("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;" ::: "memory");
    if (mode == 9)
        asm volatile("fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;" ::: "memory");
    if (mode == 3 || mode == 4)
        asm volatile("bar.sync 1, 128;" ::: "memory");
    else
        __syncthreads();
    if (mode == 2 || mode == 4)
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // LATE FENCE
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"   // STORE
                     :: "l"(&map), "r"(0), "r"(0), "r"(base) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
"""

# Two boxes through two buffers, as kernels/hopper.cu's matmul_async_store sends its boxes: each
# thread writes box b, fences, and the named barrier hands the buffer to thread 0, which stores
# it. A thread may go on to write and fence box 1 before thread 0 stores box 0: under the forward
# schedule thread 127, the barrier's last arrival, runs on first (kc_ptx.cpp: named_barrier).
# mode 0: correct. 1: thread 127 does not fence box 0 (its fence for box 1, after box 0's
# barrier, must not count for box 0).
BOXES_SRC = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void two_boxes(const __grid_constant__ TensorMap map, int mode) {
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    for (int b = 0; b < 2; ++b) {
        unsigned buf = base + 8192 * b;
        for (int i = 0; i < 16; ++i) {
            unsigned a = buf + 4 * (threadIdx.x * 16 + i);
            float v = (b ? -1.0f : 1.0f) * float(threadIdx.x * 16 + i);
            asm volatile("st.shared.f32 [%0], %1;" :: "r"(a), "f"(v) : "memory");   // BOX WRITE
        }
        if (b == 1 || mode == 0 || threadIdx.x != 127)
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // BOX FENCE
        asm volatile("bar.sync 1, 128;" ::: "memory");
        if (threadIdx.x == 0) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"   // BOX STORE
                         :: "l"(&map), "r"(64 * b), "r"(0), "r"(buf) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
"""

# One wgmma m64n8k16 (bf16) whose A (64 x 16, K-major, 128-byte swizzle) and B (16 x 8, MN-major)
# the warpgroup's threads wrote with ordinary stores (test_hopper_cpu.py's WGMMA_OPERANDS). mode 0: each
# thread fences, then __syncthreads. 1: no fence. 2: the fence after the __syncthreads.
WGMMA_SRC = r"""
extern "C" __global__ void one_wgmma(const unsigned short* A, const unsigned short* B, float* D, int mode) {
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned short* s = (unsigned short*)__cvta_shared_to_generic(base);
""" + WGMMA_OPERANDS + r"""    if (mode == 0)
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // FENCE
    __syncthreads();
    if (mode == 2)
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // LATE FENCE
""" + WGMMA_DESCRIPTORS + r"""    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"   // WGMMA
                 " {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
""" + STORE_D + r"""}
"""


def tags(src):
    return {tag: i + 1 for i, text in enumerate(src.splitlines())
            for tag in re.findall(r"// ([A-Z][A-Z ]+[A-Z])\b", text)}


STORE_LINES, BOXES_LINES, WGMMA_LINES = tags(STORE_SRC), tags(BOXES_SRC), tags(WGMMA_SRC)
MESSAGE_CHARS = 1400   # a message fits a phone (tests/course/test_hopper_course.py)


@pytest.fixture(scope="module")
def store_box():
    return cudacheck.RawModule(STORE_SRC, backend="cpu", check=True).get_function("store_box")


@pytest.fixture(scope="module")
def two_boxes():
    return cudacheck.RawModule(BOXES_SRC, backend="cpu", check=True).get_function("two_boxes")


@pytest.fixture(scope="module")
def one_wgmma():
    return cudacheck.RawModule(WGMMA_SRC, backend="cpu", check=True).get_function("one_wgmma")


def run_store(f, mode, schedule):
    P = np.zeros((32, 64), np.float32)
    f(1, 128, (cudacheck.tensor_map_2d(P, box_rows=32, box_cols=64, swizzle=0), np.int32(mode)), shared_mem=9216,
      schedule=schedule)
    return P


def unfenced(f, *args, **kw):
    with pytest.raises(cudacheck.ProxyFenceError) as e:
        f(*args, **kw)
    err = e.value
    assert isinstance(err, cudacheck.SharedMemoryRaceError)
    msg = str(err)
    assert "fence.proxy.async.shared::cta" in msg and "ordinary store (the generic proxy)" in msg
    assert len(msg) <= MESSAGE_CHARS, msg
    return err, msg


# ---- a TMA store of a box the threads wrote ----------------------------------------------------

@pytest.mark.parametrize("mode", [0, 3, 7, 8], ids=["__syncthreads", "bar.sync", "every space", "one-way release"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_each_writer_fencing_before_the_barrier_passes(store_box, mode, schedule):
    P = run_store(store_box, mode, schedule)
    assert np.array_equal(P, np.arange(32 * 64, dtype=np.float32).reshape(32, 64))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_box_stored_with_no_fence(store_box, schedule):
    err, msg = unfenced(run_store, store_box, 1, schedule)
    assert err.line == STORE_LINES["WRITE"] and err.async_line == STORE_LINES["STORE"] and err.op == "store"
    assert err.thread == (0, 0, 0) and err.issuer == (0, 0, 0) and err.fence_line == 0
    assert err.array == "smem" and err.block == (0, 0, 0)
    assert "thread (0, 0, 0) writes smem[" in msg and f"on line {STORE_LINES['WRITE']}" in msg
    assert f"the TMA store on line {STORE_LINES['STORE']} (issued by thread (0, 0, 0))" in msg
    assert "before the barrier that hands the buffer to the thread issuing the TMA store" in msg


@pytest.mark.parametrize("mode", [2, 4], ids=["__syncthreads", "bar.sync"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_fence_after_the_barrier_does_not_count(store_box, mode, schedule):
    """Thread 0's own fence after the barrier still lies between its writes and its store, in its
    program order: the first element the store reads from another writer is thread 1's."""
    err, msg = unfenced(run_store, store_box, mode, schedule)
    assert err.line == STORE_LINES["WRITE"] and err.async_line == STORE_LINES["STORE"]
    assert err.thread == (1, 0, 0) and err.issuer == (0, 0, 0)
    assert err.index[0] - 4 * 16 < 1024   # thread 1's first element (smem is aligned up to 1,024 bytes)
    # where the run had thread 1 fence before the store was issued, the message names that fence
    assert err.fence_line in (0, STORE_LINES["LATE FENCE"])
    if err.fence_line:
        assert f"its fence.proxy.async on line {err.fence_line} comes after the synchronization" in msg


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_one_writer_without_its_fence_is_named(store_box, schedule):
    err, _ = unfenced(run_store, store_box, 5, schedule)
    assert err.thread == (5, 0, 0) and err.line == STORE_LINES["WRITE"] and err.fence_line == 0


# ---- boxes in turn: a fence for the next box does not stand in for this one's --------------------

@pytest.mark.parametrize("schedule", SCHEDULES)
def test_writers_fencing_the_next_box_before_this_ones_store_pass(two_boxes, schedule):
    P = np.zeros((32, 128), np.float32)
    two_boxes(1, 128, (cudacheck.tensor_map_2d(P, box_rows=32, box_cols=64, swizzle=0), np.int32(0)),
              shared_mem=17408, schedule=schedule)
    box = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    assert np.array_equal(P[:, :64], box) and np.array_equal(P[:, 64:], -box)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_next_boxs_fence_does_not_hide_a_missing_one(two_boxes, schedule):
    P = np.zeros((32, 128), np.float32)
    err, _ = unfenced(two_boxes, 1, 128, (cudacheck.tensor_map_2d(P, box_rows=32, box_cols=64, swizzle=0),
                                          np.int32(1)), shared_mem=17408, schedule=schedule)
    assert err.line == BOXES_LINES["BOX WRITE"] and err.async_line == BOXES_LINES["BOX STORE"]
    assert err.thread == (127, 0, 0) and err.index[0] - 4 * 127 * 16 < 1024   # box 0's (smem is aligned up)
    # under the forward schedule thread 127 has fenced for box 1 when box 0's store is issued: the
    # message names that fence as the one that comes too late
    assert err.fence_line == (BOXES_LINES["BOX FENCE"] if schedule == "forward" else 0)


# ---- a wgmma of operands the threads wrote -------------------------------------------------------

def run_wgmma(f, mode, schedule, rng):
    (A, Af), (B, Bf) = bf16(rng.standard_normal((64, 16), np.float32)), bf16(rng.standard_normal((16, 8), np.float32))
    D = np.zeros((64, 8), np.float32)
    f(1, 128, (A, B, D, np.int32(mode)), shared_mem=17408, schedule=schedule)
    return D, Af.astype(np.float64) @ Bf.astype(np.float64)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_wgmma_of_fenced_operands_passes(one_wgmma, schedule, rng):
    D, exact = run_wgmma(one_wgmma, 0, schedule, rng)
    assert np.allclose(D, exact, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [1, 2], ids=["no fence", "the fence after the barrier"])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_wgmma_of_operands_stored_with_no_fence_before_the_barrier(one_wgmma, mode, schedule, rng):
    """A is read first, element (0, 0) first: thread 0's. Its fence after the barrier (mode 2) is
    ordered before its own warp's part of the wgmma, not before the other warps'."""
    err, msg = unfenced(run_wgmma, one_wgmma, mode, schedule, rng)
    assert err.line == WGMMA_LINES["A WRITE"] and err.async_line == WGMMA_LINES["WGMMA"] and err.op == "wgmma"
    assert err.thread == (0, 0, 0) and err.warpgroup == 0
    assert err.fence_line == (WGMMA_LINES["LATE FENCE"] if mode == 2 else 0)
    assert f"the wgmma.mma_async on line {WGMMA_LINES['WGMMA']} of warpgroup 0 reads it as an operand" in msg
    assert "before the barrier that hands the buffer to the warpgroup issuing the wgmma" in msg


# ---- the fence's state space -----------------------------------------------------------------------

@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_fence_of_global_memory_does_not_count_and_is_named(store_box, schedule):
    """fence.proxy.async.global orders the proxies' accesses of global memory only: the box in
    shared memory is as unfenced as with no fence, and the message says which fence was the
    wrong one."""
    err, msg = unfenced(run_store, store_box, 6, schedule)
    assert err.line == STORE_LINES["WRITE"] and err.async_line == STORE_LINES["STORE"] and err.fence_line == 0
    assert err.global_fence_line == STORE_LINES["GLOBAL FENCE"]
    assert f"its fence.proxy.async.global on line {STORE_LINES['GLOBAL FENCE']} orders global memory only" in msg


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_acquire_form_runs_and_does_not_fence_the_writes(store_box, schedule):
    """fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster (ptxas takes it
    for sm_90a) orders the async proxy's writes before the thread's accesses, not the thread's
    writes before the TMA store's read: the box is unfenced."""
    err, _ = unfenced(run_store, store_box, 9, schedule)
    assert err.line == STORE_LINES["WRITE"] and err.fence_line == 0 and err.global_fence_line == 0


@pytest.mark.parametrize("fence,reason", [
    ("fence.proxy.async.shared", "State space incorrect for instruction 'fence.proxy'"),
    ("fence.proxy.async.shared::cta.global", "its state space may be"),
    ("fence.proxy.async.shared::cta.global", "Unexpected number of state spaces specified for instruction"),
    ("fence.proxy.async::generic.release.sync_restrict::shared::cluster.cluster",
     ".sync_restrict::shared::cta modifier required for instruction 'fence.proxy'"),
    ("fence.proxy.async::generic.acquire.sync_restrict::shared::cta.cluster",
     ".sync_restrict::shared::cluster modifier required for instruction 'fence.proxy'"),
])
def test_a_proxy_fence_ptxas_refuses_is_refused_with_its_reason(fence, reason):
    """What nvcc 13.0's ptxas says for sm_90a of each (a plain .shared, two state spaces, each
    one-way form with the other's state space); the CPU runtime accepts no more."""
    src = STORE_SRC.replace('asm volatile("fence.proxy.async.global;"', f'asm volatile("{fence};"')
    with pytest.raises(cudacheck.UnsupportedFeatureError) as e:
        cudacheck.RawModule(src, backend="cpu", check=True).get_function("store_box")
    assert fence in str(e.value) and "which ptxas refuses" in str(e.value) and reason in str(e.value)
