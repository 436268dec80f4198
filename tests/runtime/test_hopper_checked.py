"""Checked mode on Hopper kernels' inline PTX (cpu/src/kc_check_async.cpp): each hazard of
the async proxy that no NVIDIA tool names, committed by one small kernel (a TMA copy of a 64 x 64
bf16 tile onto an mbarrier, one wgmma m64n8k16 reading it; a TMA store of a float box whose
buffer is then rewritten), asserting the class, the line and the message's facts (with the
wgmma inside helpers, the calls that reach it: error.calls); the same
kernels without the bug, and kernels/hopper.cu's three kernels on
a small awkward shape, run checked with no finding."""
import re

import numpy as np
import pytest

import cudacheck
from tests.support.hopper import HAZARDS, HAZARDS_SHARED, HOPPER, KERNELS, OPTIONS, bf16
from tiling_course import hopper

LINES = {tag: i + 1 for i, text in enumerate(HAZARDS.splitlines())
         for tag in re.findall(r"// ([A-Z][A-Z ]+[A-Z])\b", text)}


@pytest.fixture(scope="module")
def hazards():
    return cudacheck.RawModule(HAZARDS, backend="cpu", check=True).get_function("hazards")


def run(f, mode, rng):
    (A, Af), (B, Bf) = bf16(rng.standard_normal((64, 64), np.float32)), bf16(rng.standard_normal((16, 8), np.float32))
    tmap = cudacheck.tensor_map_2d(A, box_rows=64, box_cols=64, element="bf16", swizzle=128)
    D, out = np.zeros((64, 8), np.float32), np.zeros(1, np.int32)
    f(1, 128, (tmap, B, D, np.int32(mode), out), shared_mem=HAZARDS_SHARED)
    return D, Af[:, :16].astype(np.float64) @ Bf.astype(np.float64)


def test_the_correct_kernel_has_no_finding_and_multiplies(hazards, rng):
    D, exact = run(hazards, 0, rng)
    assert np.allclose(D, exact, rtol=1e-5, atol=1e-5)


def test_a_wgmma_of_a_tile_no_thread_waited_for(hazards, rng):
    with pytest.raises(cudacheck.TileNotReadyError) as e:
        run(hazards, 1, rng)
    assert e.value.line == LINES["WGMMA"] and e.value.copy_line == LINES["COPY"] and e.value.op == "wgmma"
    assert isinstance(e.value, cudacheck.SharedMemoryRaceError)
    msg = str(e.value)
    assert "warp 0 of warpgroup 0" in msg and "phase 0 (parity 0)" in msg
    assert "no thread of that warp has waited on this barrier at all" in msg and "more than 0" not in msg


def test_a_read_of_the_tile_before_the_wait(hazards, rng):
    with pytest.raises(cudacheck.TileNotReadyError) as e:
        run(hazards, 2, rng)
    assert e.value.line == LINES["EARLY READ"] and e.value.thread == (0, 0, 0) and e.value.op == "read"
    assert f"the TMA copy on line {LINES['COPY']}" in str(e.value) and "smem[" in str(e.value)


def test_a_store_into_an_operand_while_the_wgmma_is_in_flight(hazards, rng):
    with pytest.raises(cudacheck.WgmmaOperandRaceError) as e:
        run(hazards, 3, rng)
    assert e.value.line == LINES["OVERWRITE"] and e.value.wgmma_line == LINES["WGMMA"]
    assert e.value.thread == (5, 0, 0) and e.value.warpgroup == 0
    assert "still reads it" in str(e.value) and "smem[" in str(e.value)


# The wgmma's accumulators touched before the wait_group that retires it (modes 8 to 10): the
# access's line, the wgmma's, the thread and the accumulator, the group's state and the fix.
@pytest.mark.parametrize("mode, tag, thread, op, register, state", [
    (8, "ACC READ", 33, "read", 1, "commit group 0 (counting this thread's wgmma.commit_group from 0) is still in "
                                   "flight: it has retired none with wgmma.wait_group"),
    (9, "ACC ZEROED", 70, "write", 2, "no wgmma.commit_group has put it in a group yet"),
    (10, "STORE D", 127, "read", 0, "commit group 0 (counting this thread's wgmma.commit_group from 0) is still in "
                                  "flight"),
])
def test_an_accumulator_touched_before_its_wait_group(hazards, rng, mode, tag, thread, op, register, state):
    with pytest.raises(cudacheck.WgmmaAccumulatorRaceError) as e:
        run(hazards, mode, rng)
    err = e.value
    assert isinstance(err, cudacheck.RaceError) and not isinstance(err, cudacheck.SharedMemoryRaceError)
    assert (err.line, err.wgmma_line, err.thread, err.op, err.register) == (LINES[tag], LINES["WGMMA"],
                                                                            (thread, 0, 0), op, register)
    msg = str(err)
    verb = "reads" if op == "read" else "writes"
    assert (f"thread ({thread}, 0, 0) {verb}, on line {LINES[tag]}, the variable bound to register {register} of "
            f"the accumulator vector of the wgmma.mma_async on line {LINES['WGMMA']}") in msg
    assert state in msg and "wgmma.wait_group 0" in msg


def test_a_register_fence_of_the_accumulators_in_flight_touches_none(hazards, rng):
    D, exact = run(hazards, 11, rng)
    assert np.allclose(D, exact, rtol=1e-5, atol=1e-5)


def test_more_bytes_than_expect_tx_announced(hazards, rng):
    with pytest.raises(cudacheck.TransactionCountError) as e:
        run(hazards, 4, rng)
    assert e.value.line == LINES["COPY"] and (e.value.expected, e.value.delivered) == (4096, 8192)
    assert "expect_tx announced 4096 bytes, the copies delivered 8192" in str(e.value)


def test_fewer_bytes_than_expect_tx_announced_stall_and_say_so(hazards, rng):
    with pytest.raises(cudacheck.ForwardProgressError) as e:
        run(hazards, 5, rng)
    assert e.value.line == LINES["WAIT"]
    assert "expected 16384 bytes with expect_tx and its copies delivered 8192" in str(e.value)


def test_a_wgmma_one_warp_of_the_warpgroup_skips(hazards, rng):
    with pytest.raises(cudacheck.WarpgroupCollectiveError) as e:
        run(hazards, 6, rng)
    assert isinstance(e.value, cudacheck.WarpCollectiveError)
    assert e.value.line == LINES["WGMMA"] and e.value.missing == [3] and len(e.value.arrived) == 96
    msg = str(e.value)
    assert "not reached by warp 3" in msg and f"wait at __syncthreads() on line {LINES['SKIP']}" in msg


def test_a_tma_box_past_the_end_of_shared_memory(hazards, rng):
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        run(hazards, 7, rng)
    assert e.value.line == LINES["COPY"] and e.value.array == "smem" and e.value.op == "write"
    assert "the 64 x 64 box (8192 bytes) of the tensor map" in str(e.value)


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_hopper_kernels_run_checked_with_no_finding(kernel, rng):
    module = cudacheck.RawModule(HOPPER, backend="cpu", options=OPTIONS, check=True)
    m, n, k = 70, 300, 330   # 6 slices of k: every slot reused; two tiles of N (one persistent block)
    (M, Mf), (N, Nf) = bf16(rng.standard_normal((m, k), np.float32)), bf16(rng.standard_normal((k, n), np.float32))
    P, _ = hopper.launch(module, kernel, M, N, sms=1)
    exact = Mf.astype(np.float64) @ Nf.astype(np.float64)
    scale = np.abs(Mf.astype(np.float64)) @ np.abs(Nf.astype(np.float64))
    assert np.all(np.abs(P - exact) <= 2 * k * 2.0 ** -24 * scale)


# Warp 0 reads a buffer, lane 0 alone hands it back on an mbarrier, and thread 32 overwrites it
# once its wait sees the phase: ordered only where a __syncwarp() puts the other lanes' reads
# before lane 0's arrival (matmul_tf32's consumers hand a slot back so).
HANDBACK = r"""
extern "C" __global__ void handback(int* out, int sync) {
    __shared__ unsigned long long bar;
    __shared__ int buf[32];
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x < 32) buf[threadIdx.x] = threadIdx.x;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    __syncthreads();
    if (threadIdx.x < 32) {
        out[threadIdx.x] = buf[threadIdx.x];   // READ
        if (sync) __syncwarp();
        if (threadIdx.x == 0)
            asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" :: "r"(b) : "memory");
    } else if (threadIdx.x == 32) {
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(b) : "memory");
        for (int i = 0; i < 32; ++i) buf[i] = -i;   // WRITE
    }
}"""


def test_one_lanes_arrival_hands_back_the_warps_reads_after_a_syncwarp():
    f = cudacheck.RawModule(HANDBACK, backend="cpu", check=True).get_function("handback")
    out = np.zeros(32, np.int32)
    f(1, 64, (out, np.int32(1)))
    assert out.tolist() == list(range(32))
    lines = {tag: i + 1 for i, text in enumerate(HANDBACK.splitlines())
             for tag in ("READ", "WRITE") if f"// {tag}" in text}
    with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
        f(1, 64, (out, np.int32(0)))
    assert "write after read" in str(e.value) and f"line {lines['READ']}" in str(e.value)
    assert f"line {lines['WRITE']}" in str(e.value)


# A TMA store's source (cp.async.bulk.tensor, shared to global, .bulk_group) is read by the async
# proxy until the issuing thread's cp.async.bulk.wait_group.read retires its group. Thread 127
# stores a 64 x 32 float box from `buf` into P's left half, then the block rewrites `buf` and
# thread 127 stores it into P's right half. mode 0: correct (wait_group.read 0, a barrier, the
# rewrite). 1: no wait before the rewrite. 2: wait_group.read 1, which leaves the one group
# committed still reading. 3: thread 127 loads a box of P into the buffer (a TMA copy) before
# its wait. 4: thread 127 waits after the barrier, not before it: nothing orders the other
# threads' rewrite after its wait.
STORE_SRC = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void store_box(const __grid_constant__ TensorMap map, int mode) {
    __shared__ unsigned long long bar;
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    float* buf = (float*)__cvta_shared_to_generic(base);
    for (int i = 0; i < 16; ++i) buf[threadIdx.x * 16 + i] = threadIdx.x * 16 + i;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 127) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"   // STORE
                     :: "l"(&map), "r"(0), "r"(0), "r"(base) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (mode == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");   // WAIT
        if (mode == 2) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");   // WAIT ONE
        if (mode == 3) {
            unsigned b = (unsigned)__cvta_generic_to_shared(&bar), done = 0;
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
            asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], 8192; }" :: "r"(b));
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"   // LOAD
                         " [%0], [%1, {%2, %3}], [%4];" :: "r"(base), "l"(&map), "r"(32), "r"(0), "r"(b) : "memory");
            while (!done)
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "
                             "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b));
        }
    }
    if (mode == 4) asm volatile("bar.sync 1, 128;" ::: "memory");   // (the CPU runtime runs its last arrival on first)
    else __syncthreads();
    if (mode == 4 && threadIdx.x == 127) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");   // LATE
    for (int i = 0; i < 16; ++i) buf[threadIdx.x * 16 + i] = -float(threadIdx.x * 16 + i);   // REWRITE
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 127) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"   // STORE 2
                     :: "l"(&map), "r"(32), "r"(0), "r"(base) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
"""
STORE_LINES = {tag: i + 1 for i, text in enumerate(STORE_SRC.splitlines())
               for tag in re.findall(r"// ([A-Z][A-Z0-9 ]+[A-Z0-9])\b", text)}


@pytest.fixture(scope="module")
def store_box():
    return cudacheck.RawModule(STORE_SRC, backend="cpu", check=True).get_function("store_box")


def run_store(f, mode):
    P = np.zeros((64, 64), np.float32)
    f(1, 128, (cudacheck.tensor_map_2d(P, box_rows=64, box_cols=32, swizzle=0), np.int32(mode)), shared_mem=9216)
    return P


def test_a_buffer_rewritten_after_the_stores_wait_and_a_barrier(store_box):
    P = run_store(store_box, 0)
    box = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    assert np.array_equal(P[:, :32], box) and np.array_equal(P[:, 32:], -box)


def test_a_buffer_rewritten_while_the_tma_store_may_still_read_it(store_box):
    with pytest.raises(cudacheck.TmaStoreSourceRaceError) as e:
        run_store(store_box, 1)
    assert isinstance(e.value, cudacheck.SharedMemoryRaceError)
    assert e.value.line == STORE_LINES["REWRITE"] and e.value.store_line == STORE_LINES["STORE"]
    assert e.value.thread == (0, 0, 0) and e.value.store_thread == (127, 0, 0) and e.value.op == "write"
    msg = str(e.value)
    assert f"the TMA store on line {STORE_LINES['STORE']}" in msg and "thread (127, 0, 0)" in msg
    assert "smem[" in msg and "wait_group.read" in msg and len(msg) <= 1400


def test_a_wait_that_leaves_the_store_reading(store_box):
    with pytest.raises(cudacheck.TmaStoreSourceRaceError) as e:
        run_store(store_box, 2)
    assert e.value.line == STORE_LINES["REWRITE"] and e.value.store_line == STORE_LINES["STORE"]
    assert (e.value.group, e.value.retired) == (0, 0)


def test_a_tma_copy_into_the_buffer_while_the_store_may_still_read_it(store_box):
    with pytest.raises(cudacheck.TmaStoreSourceRaceError) as e:
        run_store(store_box, 3)
    assert e.value.line == STORE_LINES["LOAD"] and e.value.store_line == STORE_LINES["STORE"]
    assert e.value.op == "copy" and e.value.thread == e.value.store_thread == (127, 0, 0)
    assert f"the TMA copy on line {STORE_LINES['LOAD']} (issued by thread (127, 0, 0))" in str(e.value)


def test_a_wait_after_the_barrier_leaves_the_other_threads_unordered(store_box):
    """Thread 127, the last to reach the named barrier, runs on from it first and waits before
    the others rewrite: the wait lets every other thread run before it retires the group (bulk_wait,
    kc_async.cpp), so their writes land in the window, where checked mode sees them."""
    with pytest.raises(cudacheck.TmaStoreSourceRaceError) as e:
        run_store(store_box, 4)
    assert e.value.line == STORE_LINES["REWRITE"] and e.value.store_line == STORE_LINES["STORE"]
    assert e.value.thread != (127, 0, 0) and e.value.store_thread == (127, 0, 0)


# HAZARDS with its wgmma inside helpers: mma_outer (a template) calls mma_inner through a lambda.
# A finding about the wgmma names the asm's line (error.line) and the calls that reach it
# (error.calls, the kernel's first), from the line table's inline chain.
HELPERS = r"""
__device__ __forceinline__ void mma_inner(float (&d)[4], unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"   // INNER WGMMA
                 " {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
}
template <int N>
__device__ __forceinline__ void mma_outer(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
    auto multiply = [&]() { mma_inner(d, da, db); };   // LAMBDA CALL
    multiply();   // OUTER CALL
}
"""
_WGMMA = HAZARDS[HAZARDS.index('    asm volatile("wgmma.mma_async'):
                 HAZARDS.index("\n", HAZARDS.index('"l"(da), "l"(db));')) + 1]
CHAIN_SRC = (HAZARDS.replace('extern "C"', HELPERS + 'extern "C"', 1)
             .replace(_WGMMA, "    mma_outer<8>(d, da, db);   // KERNEL CALL\n"))
CHAIN_LINES = {tag: i + 1 for i, text in enumerate(CHAIN_SRC.splitlines())
               for tag in re.findall(r"// ([A-Z][A-Z ]+[A-Z])\b", text)}


def test_a_finding_in_a_helper_names_the_calls_that_reach_it(rng, monkeypatch):
    f = cudacheck.RawModule(CHAIN_SRC, backend="cpu", check=True).get_function("hazards")
    with pytest.raises(cudacheck.TileNotReadyError) as e:
        run(f, 1, rng)   # no thread waits before the wgmma
    L = CHAIN_LINES
    assert e.value.line == L["INNER WGMMA"] and e.value.copy_line == L["COPY"]
    assert e.value.calls == ((L["KERNEL CALL"], "hazards"), (L["OUTER CALL"], "mma_outer"),
                             (L["LAMBDA CALL"], "a lambda in mma_outer"), (L["INNER WGMMA"], "mma_inner"))
    msg = str(e.value)
    assert f"wgmma.mma_async on line {L['INNER WGMMA']}" in msg and "\0" not in msg
    # the asm's line quoted, then where it is: its function and the calls, innermost first
    assert (f"  line {L['INNER WGMMA']}: asm volatile(\"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16\"   "
            f"// INNER WGMMA\n    in mma_inner, called from line {L['LAMBDA CALL']} in a lambda in mma_outer, "
            f"{L['OUTER CALL']} in mma_outer, {L['KERNEL CALL']} in hazards\n") in msg
    # the calls' lines quoted too, as many as the message has room for (here: all of them)
    monkeypatch.setattr(cudacheck.cpu.findings, "CALLS_BUDGET", 10000)
    with pytest.raises(cudacheck.TileNotReadyError) as e:
        run(f, 1, rng)
    assert (f"{L['KERNEL CALL']} in hazards\n"
            f"  line {L['LAMBDA CALL']}: auto multiply = [&]() {{ mma_inner(d, da, db); }};   // LAMBD…\n"
            f"  line {L['OUTER CALL']}: multiply();   // OUTER CALL\n"
            f"  line {L['KERNEL CALL']}: mma_outer<8>(d, da, db);   // KERNEL CALL\n") in str(e.value)


def test_a_finding_in_the_kernel_itself_names_no_calls(hazards, rng):
    with pytest.raises(cudacheck.TileNotReadyError) as e:
        run(hazards, 1, rng)
    assert e.value.line == LINES["WGMMA"] and e.value.calls == ()
    assert "called from" not in str(e.value)
