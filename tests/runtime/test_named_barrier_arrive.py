"""bar.arrive (and barrier.arrive): an arrival at a named barrier that does not wait, the
producer's half of a producer/consumer handoff whose consumers wait with bar.sync (PTX ISA,
"bar, barrier": the arrive "does not cause the executing thread to wait"; memory accesses
requested before it are performed relative to the threads that the barrier completes for).
Barrier 0 is __syncthreads()'s; an arrival there meets bar.sync 0 with the same count (the PTX
ISA's own example hands off through barrier 0). The CPU runtime runs it, checked mode follows
its ordering in shared and global memory, and what ptxas refuses (no thread count, a count that
is not whole warps) is refused with its reason. Arrivals at one use of a barrier that mix thread
counts, or a count and none (bar.arrive 0 beside __syncthreads()), stop a GPU with an illegal
instruction; the CPU runtime names them. On a GPU the same kernels give the same values."""
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import cudacheck

ROUNDS = 3

SOURCE = r'''
__device__ __forceinline__ void ARRIVE(int id) { asm volatile("bar.arrive %0, 128;" :: "r"(id) : "memory"); }
__device__ __forceinline__ void WAIT(int id) { asm volatile("bar.sync %0, 128;" :: "r"(id) : "memory"); }

// Warps 0-1 produce, warps 2-3 consume, through buf (shared) or g (global), for ROUNDS rounds:
// the producers write round r's values and arrive at barrier `full`; the consumers wait
// there, read a neighbour's value, and arrive at barrier 2 ("empty"), at which the producers
// wait before they write again.
// mode 1: the producers do not arrive at "full" and the consumers do not wait there; mode 2:
// the roles at "full" swapped (the producers wait, the consumers only arrive, so nothing the
// producers wrote is ordered before the consumers' reads); mode 3: the producers write again
// after their arrival, which the consumers' reads are not ordered with. (Run for one round:
// in modes 1 and 2 a later round's arrivals would complete the other round's barriers.)
extern "C" __global__ void handoff(float* g, float* out, int global_memory, int rounds, int mode, int full) {
    __shared__ float buf[64];
    float* b = global_memory ? g : buf;
    int t = threadIdx.x;
    for (int r = 0; r < rounds; ++r) {
        if (t < 64) {
            if (r > 0) WAIT(2);
            b[t] = 100.0f * r + t;                                        // PRODUCER WRITE
            if (mode == 2) WAIT(full); else if (mode != 1) ARRIVE(full);
            if (mode == 3) b[t] = -1.0f;                                  // PRODUCER REWRITE
        } else {
            if (mode == 2) ARRIVE(full); else if (mode != 1) WAIT(full);
            out[r * 64 + t - 64] = b[(t + 1) % 64];                        // CONSUMER READ
            if (r + 1 < rounds) ARRIVE(2);
        }
    }
}

// barrier.arrive and barrier.sync, bar.arrive's and bar.sync's other spellings, with .aligned
// and with .cta, and an immediate barrier id.
extern "C" __global__ void spellings(float* out) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = 2.0f * t;
        asm volatile("barrier.cta.arrive.aligned 5, 128;" ::: "memory");
    } else {
        asm volatile("barrier.sync.aligned 5, 128;" ::: "memory");
        out[t - 64] = buf[63 - (t - 64)];
    }
}

// The PTX ISA's example ("bar, barrier"): warp 0 produces, warp 1 consumes, through barrier 0
// for 64 threads, and warp 2 takes no part (so barrier 0 here is not the whole block's).
extern "C" __global__ void isa_example(float* out) {
    __shared__ float buf[32];
    int t = threadIdx.x;
    if (t < 32) {
        buf[t] = 5.0f * t;
        asm volatile("bar.arrive 0, 64;" ::: "memory");
        asm volatile("bar.sync 1, 64;" ::: "memory");
        buf[t] = -1.0f;
    } else if (t < 64) {
        asm volatile("bar.sync 0, 64;" ::: "memory");
        out[t - 32] = buf[63 - t];
        asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else {
        out[t - 32] = 7.0f;
    }
}

// The producers arrive at barrier 1 where the consumers wait at barrier 2: a GPU hangs.
extern "C" __global__ void mismatched(float* out) {
    if (threadIdx.x < 64) ARRIVE(1);
    else WAIT(2);                                                         // MISMATCHED WAIT
    out[threadIdx.x] = 1.0f;
}

// Warps 0-1 write and arrive, warps 2-3 wait and read, at one use of a barrier whose arrivals
// mix thread counts, or a count and none.
extern "C" __global__ void mixed(float* out, int variant) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = 3.0f * t;
        switch (variant) {
        case 0: case 1: case 5: asm volatile("bar.arrive 0, 128;" ::: "memory"); break;   // MIX ARRIVE 0
        case 2: asm volatile("bar.arrive 1, 128;" ::: "memory"); break;
        case 3: asm volatile("bar.sync 0;" ::: "memory"); break;                              // MIX SYNC 0
        case 4: asm volatile("bar.arrive 1, 64;" ::: "memory"); break;                         // MIX ARRIVE 64
        }
    } else {
        switch (variant) {
        case 0: __syncthreads(); break;                                                        // MIX SYNCTHREADS
        case 1: asm volatile("bar.sync 0;" ::: "memory"); break;                              // MIX BAR0 NO COUNT
        case 2: asm volatile("bar.sync 1;" ::: "memory"); break;                              // MIX BAR1 NO COUNT
        case 3: asm volatile("bar.sync 0, 128;" ::: "memory"); break;                         // MIX BAR0 COUNT
        case 4: asm volatile("bar.sync 1, 128;" ::: "memory"); break;
        case 5: __syncthreads_count(1); break;                                                 // MIX COUNT
        }
        out[t - 64] = buf[127 - t];
    }
}

// Threads that return before a barrier: warps 2-3 (variants 0, 2, 3) or the upper half of every
// warp (variant 1). A barrier without a count waits only for the threads left; one with a count
// waits for them all: a GPU hangs.
extern "C" __global__ void after_exits(float* out, int variant) {
    __shared__ float buf[128];
    int t = threadIdx.x;
    if (variant == 1 ? t % 32 >= 16 : t >= 64) return;
    buf[t] = 3.0f * t;
    if (variant <= 1) asm volatile("bar.sync 1;" ::: "memory");
    else if (variant == 2) asm volatile("bar.sync 1, 128;" ::: "memory");              // COUNTED 1
    else asm volatile("bar.sync 0, 128;" ::: "memory");                                 // COUNTED 0
    out[t] = buf[t ^ 1] + 1.0f;
}

// An arrival of 96 threads' count (ptxas takes any multiple of 32 it cannot see, and the GPU
// counts warps) given at run time as `count`.
extern "C" __global__ void runtime_count(float* out, unsigned count) {
    if (threadIdx.x < 64) asm volatile("bar.arrive 1, %0;" :: "r"(count) : "memory");
    else asm volatile("bar.sync 1, %0;" :: "r"(count) : "memory");
    out[threadIdx.x] = 1.0f;
}
'''


def line_of(text):
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    assert len(lines) == 1, (text, lines)
    return lines[0]


@lru_cache(maxsize=None)
def module(backend, check):
    return cudacheck.RawModule(code=SOURCE, backend=backend, check=check)


def run_handoff(mode, global_memory, backend="cpu", check=True, schedule=None, rounds=ROUNDS, full=1):
    xp = np
    if backend == "gpu":
        import cupy as xp
    g, out = xp.zeros(64, xp.float32), xp.full(rounds * 64, xp.nan, xp.float32)
    kw = {"schedule": schedule} if schedule else {}
    module(backend, check).get_function("handoff")((1,), (128,), (g, out, np.int32(global_memory),
                                                                  np.int32(rounds), np.int32(mode), np.int32(full)),
                                                     **kw)
    return out.get() if backend == "gpu" else out


def expected():
    r, t = np.divmod(np.arange(ROUNDS * 64), 64)
    return (100.0 * r + (t + 1) % 64).astype(np.float32)


FULL = pytest.mark.parametrize("full", [1, 0], ids=["barrier 1", "barrier 0"])


@FULL
@pytest.mark.parametrize("global_memory", [0, 1], ids=["shared", "global"])
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_a_producer_arrives_and_its_consumers_wait(global_memory, schedule, check, full):
    # At barrier 0 (bar.sync 0, 128: the whole block, so it waits where __syncthreads() does) the
    # consumers wait for the producers' arrivals as at barrier 1: had those not counted, the
    # producers would wait at barrier 2 for consumers that wait for them.
    out = run_handoff(0, global_memory, check=check, schedule=schedule, full=full)
    np.testing.assert_array_equal(out, expected())


@FULL
@pytest.mark.parametrize("mode", [1, 2, 3], ids=["no handoff", "the roles swapped", "a write after the arrival"])
@pytest.mark.parametrize("global_memory", [0, 1], ids=["shared", "global"])
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_a_handoff_the_barrier_does_not_order_is_a_race(mode, global_memory, schedule, full):
    if mode == 1 and full != 1:
        pytest.skip("no handoff uses no barrier")
    error = cudacheck.GlobalMemoryRaceError if global_memory else cudacheck.SharedMemoryRaceError
    with pytest.raises(error) as e:
        run_handoff(mode, global_memory, schedule=schedule, rounds=1, full=full)
    err = e.value
    assert err.kernel == "handoff" and err.array == ("g" if global_memory else "buf")
    write = line_of("PRODUCER REWRITE" if mode == 3 else "PRODUCER WRITE")
    assert {err.line, err.other_line} == {write, line_of("CONSUMER READ")}
    assert {err.thread[0] // 64, err.other_thread[0] // 64} == {0, 1}     # a producer and a consumer


def test_the_other_spellings_run():
    out = np.zeros(64, np.float32)
    module("cpu", True).get_function("spellings")((1,), (128,), (out,))
    np.testing.assert_array_equal(out, 2.0 * (63 - np.arange(64)))


# (variant, barrier, the second arrival: its line's mark, what it calls, its count, the first's count,
# its thread). Variant 4 runs its consumers first, as a GPU did (in the other order the producers'
# 64 arrivals complete a use of their own, and the consumers wait for 64 more that never come).
MIXES = [(0, 0, "MIX SYNCTHREADS", "__syncthreads()", 0, 128, 64), (1, 0, "MIX BAR0 NO COUNT", "bar.sync", 0, 128, 64),
         (2, 1, "MIX BAR1 NO COUNT", "bar.sync", 0, 128, 64), (3, 0, "MIX BAR0 COUNT", "bar.sync", 128, 0, 64),
         (4, 1, "MIX ARRIVE 64", "bar.arrive", 64, 128, 63), (5, 0, "MIX COUNT", "__syncthreads_count()", 0, 128, 64)]
MIX_IDS = ["bar.arrive 0 and __syncthreads", "bar.arrive 0 and bar.sync 0", "bar.arrive 1 and bar.sync 1",
           "bar.sync 0 with and without a count", "counts 64 and 128", "bar.arrive 0 and __syncthreads_count"]


def run_mixed(variant, backend="cpu", check=False):
    xp = np
    if backend == "gpu":
        import cupy as xp
    out = xp.zeros(64, xp.float32)
    kw = {"schedule": "reverse"} if variant == 4 and backend == "cpu" else {}
    module(backend, check).get_function("mixed")((1,), (128,), (out, np.int32(variant)), **kw)
    return out


@pytest.mark.parametrize("variant, barrier, mark, what, count, first, thread", MIXES, ids=MIX_IDS)
@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_arrivals_that_mix_counts_at_one_use_of_a_barrier_are_named(variant, barrier, mark, what, count, first,
                                                                    thread, check):
    with pytest.raises(cudacheck.InvalidOperandError) as e:
        run_mixed(variant, check=check)
    err, msg = e.value, str(e.value)
    assert err.kernel == "mixed" and err.line == line_of(mark) and err.thread == (thread, 0, 0)
    given = {0: "no thread count", 128: "a count of 128 threads", 64: "a count of 64 threads"}
    assert f"calls {what} at line {line_of(mark)} on barrier {barrier} with {given[count]}" in msg
    assert f"where threads of its block have arrived in this use of the barrier with {given[first]}" in msg
    assert "CUDA_ERROR_ILLEGAL_INSTRUCTION" in msg


def after_exits_expected(variant):
    t = np.arange(128)
    live = t % 32 < 16 if variant == 1 else t < 64
    return np.where(live, 3.0 * (t ^ 1) + 1.0, 0.0).astype(np.float32)


@pytest.mark.parametrize("variant", [0, 1], ids=["warps returned", "half of each warp returned"])
@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_a_barrier_without_a_count_does_not_wait_for_threads_that_returned(variant, check):
    out = np.zeros(128, np.float32)
    module("cpu", check).get_function("after_exits")((1,), (128,), (out, np.int32(variant)))
    np.testing.assert_array_equal(out, after_exits_expected(variant))


@pytest.mark.parametrize("variant, barrier, mark", [(2, 1, "COUNTED 1"), (3, 0, "COUNTED 0")], ids=["1", "0"])
@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_a_barrier_with_a_count_waits_for_threads_that_returned(variant, barrier, mark, check):
    with pytest.raises(cudacheck.ForwardProgressError) as e:
        module("cpu", check).get_function("after_exits")((1,), (128,), (np.zeros(128, np.float32), np.int32(variant)))
    assert e.value.barrier == barrier and e.value.line == line_of(mark)
    assert (f"waits at named barrier {barrier} on line {line_of(mark)}, where 64 of the 128 threads its count names "
            "have arrived") in str(e.value)
    assert "the others returned at line" in str(e.value)


def isa_expected():
    return np.concatenate([5.0 * (31 - np.arange(32)), np.full(32, 7.0)]).astype(np.float32)


@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_the_ptx_isa_example_hands_off_through_barrier_0_for_part_of_the_block(check):
    out = np.zeros(64, np.float32)
    module("cpu", check).get_function("isa_example")((1,), (96,), (out,))
    np.testing.assert_array_equal(out, isa_expected())


@pytest.mark.parametrize("check", [False, True], ids=["unchecked", "checked"])
def test_a_wait_no_arrival_completes_names_the_barrier_and_where_each_thread_is(check):
    with pytest.raises(cudacheck.ForwardProgressError) as e:
        module("cpu", check).get_function("mismatched")((1,), (128,), (np.zeros(128, np.float32),))
    err, wait, call = e.value, line_of('"bar.sync %0, 128;"'), line_of("MISMATCHED WAIT")
    assert err.kernel == "mismatched" and err.barrier == 2 and err.line == wait and err.thread == (64, 0, 0)
    msg, via = str(err), f", called from line {call}" if check else ""   # (checked mode knows the helper's calls)
    assert f"waits at named barrier 2 on line {wait}{via}, where 64 of the 128 threads" in msg
    assert "threads with threadIdx.x < 64 reached the end of the kernel" in msg
    assert f"the others wait at named barrier 2 on line {wait}{via}." in msg
    assert "A GPU hangs here" in msg


def test_a_count_of_whole_warps_given_at_run_time_runs_and_another_is_refused():
    out = np.zeros(160, np.float32)
    module("cpu", False).get_function("runtime_count")((1,), (160,), (out, np.uint32(160)))
    assert (out == 1.0).all()
    with pytest.raises(cudacheck.InvalidOperandError, match="bar.arrive"):
        module("cpu", False).get_function("runtime_count")((1,), (160,), (np.zeros(160, np.float32), np.uint32(100)))


@pytest.mark.parametrize("instruction, reason", [
    ("bar.arrive 1;", "1 operand"),                                   # ptxas: "Arguments mismatch"
    ("bar.arrive.sync 1, 64;", "bar.arrive.sync"),
])
def test_forms_the_cpu_runtime_does_not_run_are_refused_with_the_reason(instruction, reason):
    code = f'extern "C" __global__ void k(float* x) {{ asm volatile("{instruction}" ::: "memory"); x[0] = 1.0f; }}'
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=reason):
        cudacheck.RawModule(code=code, backend="cpu").get_function("k")


@pytest.mark.gpu
@FULL
@pytest.mark.parametrize("global_memory", [0, 1], ids=["shared", "global"])
def test_the_gpu_gives_the_same_values(global_memory, full):
    np.testing.assert_array_equal(run_handoff(0, global_memory, backend="gpu", check=False, full=full), expected())


@pytest.mark.gpu
@pytest.mark.parametrize("variant", [m[0] for m in MIXES], ids=MIX_IDS)
def test_a_gpu_stops_at_each_mix_with_an_illegal_instruction(variant):
    # In a process of its own: the error ends the process's CUDA context. The launch is
    # asynchronous, as CuPy's: the fault is reported at the synchronisation after it.
    code = f"import cudacheck; from test_named_barrier_arrive import run_mixed; run_mixed({variant}, 'gpu'); " \
           "cudacheck.synchronize()"
    here = Path(__file__).parent
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")])})
    assert re.search(r"(?i)illegal.?instruction", r.stdout + r.stderr), r.stdout + r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("variant", [0, 1], ids=["warps returned", "half of each warp returned"])
def test_the_gpu_does_not_wait_for_returned_threads_at_a_barrier_without_a_count(variant):
    import cupy
    out = cupy.zeros(128, cupy.float32)
    module("gpu", False).get_function("after_exits")((1,), (128,), (out, np.int32(variant)))
    np.testing.assert_array_equal(out.get(), after_exits_expected(variant))


@pytest.mark.gpu
def test_the_gpu_runs_the_ptx_isa_example():
    import cupy
    out = cupy.zeros(64, cupy.float32)
    module("gpu", False).get_function("isa_example")((1,), (96,), (out,))
    np.testing.assert_array_equal(out.get(), isa_expected())
