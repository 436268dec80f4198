"""Checked mode's ordering of global memory by named barriers (bar.sync id, count), alone and in
release/acquire chains between blocks (cpu/src/kc_check_global_races.cpp, with the clocks of
kc_check_races.cpp): a warpgroup's named barrier orders its threads' global accesses as
__syncthreads() orders a block's (PTX ISA: bar.sync "guarantees that when the barrier completes,
prior memory accesses requested by this thread are performed relative to all threads
participating in the barrier"; the memory model: a bar.sync synchronizes with the bar.sync of
the others on the same barrier, and base causality order is transitive). So the last-block
pattern with a named barrier in place of __syncthreads() (a stream-K fixup) is clean, and each
kernel with its synchronization taken away, or read by threads it does not cover, is still a
GlobalMemoryRaceError."""
from functools import lru_cache

import numpy as np
import pytest

import cudacheck

SOURCE = r'''
// Two groups of 64 threads (g = threadIdx.x / 64), each meeting at its own named barrier 1 + g,
// never at the block's.
__device__ __forceinline__ void BAR(int g) { asm volatile("bar.sync %0, 64;" :: "r"(1 + g) : "memory"); }

// One block: each group's threads write x, meet at their barrier and read a neighbour's element.
// mode 1: no barrier; mode 2: the element of the other group (whose barrier is not theirs).
extern "C" __global__ void exchange(float* x, float* out, int mode) {
    int g = threadIdx.x / 64, t = threadIdx.x % 64;
    x[threadIdx.x] = 1.0f + threadIdx.x;                            // EXCHANGE WRITE
    if (mode != 1) BAR(g);
    int src = (mode == 2 ? 1 - g : g) * 64 + (t + 1) % 64;
    out[threadIdx.x] = x[src];                                      // EXCHANGE READ
}

// Block 0: group g writes data, meets at its barrier, and its thread 0 fences and raises flag[g].
// Block 1: thread 0 of group g waits for flag[g] and fences, the group meets at its barrier, and
// every thread reads a neighbour's element. mode 1: no barrier before the release; mode 2: none
// after the acquire; mode 3: the readers read the other group's data, which their flag does
// not release.
extern "C" __global__ void handoff(int* flag, float* data, float* out, int mode) {
    int g = threadIdx.x / 64, t = threadIdx.x % 64;
    if (blockIdx.x == 0) {
        data[threadIdx.x] = 1.0f + threadIdx.x;                     // HANDOFF WRITE
        if (mode != 1) BAR(g);
        if (t == 0) {
            __threadfence();
            atomicExch(&flag[g], 1);
        }
    } else {
        if (t == 0) {
            while (atomicAdd(&flag[g], 0) == 0) { }
            __threadfence();
        }
        if (mode != 2) BAR(g);
        int src = (mode == 3 ? 1 - g : g) * 64 + (t + 1) % 64;
        out[threadIdx.x] = data[src];                               // HANDOFF READ
    }
}

// The last-block pattern per group, as a stream-K fixup does it: every thread of the group
// writes its partial, the group meets at its barrier, thread 0 fences and takes a ticket; the
// last block's thread 0 fences again and tells its group through shared memory and the barrier,
// and every thread of that group adds the partials of all blocks. mode 1: no barrier before
// the fence; mode 2: no fence before the ticket.
extern "C" __global__ void last_block(float* part, unsigned* count, float* out, int mode) {
    __shared__ int last[2];
    int g = threadIdx.x / 64, t = threadIdx.x % 64;
    part[(blockIdx.x * 2 + g) * 64 + t] = 1.0f + blockIdx.x + t;    // PARTIAL WRITE
    if (mode != 1) BAR(g);
    if (t == 0) {
        if (mode != 2) __threadfence();
        unsigned ticket = atomicAdd(&count[g], 1u);
        last[g] = ticket == gridDim.x - 1;
        if (last[g]) __threadfence();
    }
    BAR(g);
    if (last[g]) {
        float s = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) s += part[(b * 2 + g) * 64 + t];   // PARTIAL READ
        out[g * 64 + t] = s;
    }
}
'''


def line_of(text):
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    assert len(lines) == 1, (text, lines)
    return lines[0]


@lru_cache(maxsize=None)
def module(check):
    return cudacheck.RawModule(code=SOURCE, backend="cpu", check=check)


def launch(name, grid, block, args, check=True, **kw):
    module(check).get_function(name)(grid, block, args, **kw)
    return args


def race(name, grid, block, args, **kw):
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        launch(name, grid, block, args, **kw)
    err = e.value
    assert isinstance(err, cudacheck.RaceError) and not isinstance(err, cudacheck.SharedMemoryRaceError)
    assert err.kernel == name
    return err


def neighbours(other_group=False):
    i = np.arange(128)
    g, t = i // 64, i % 64
    return (1.0 + ((1 - g) if other_group else g) * 64 + (t + 1) % 64).astype(np.float32)


# ---- one block: a named barrier orders its threads' global accesses ---------------------------

@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_a_named_barrier_orders_its_groups_global_accesses(schedule):
    out = launch("exchange", (1,), (128,), (np.zeros(128, np.float32), np.zeros(128, np.float32), 0),
                 schedule=schedule)[1]
    np.testing.assert_array_equal(out, neighbours())


@pytest.mark.parametrize("mode", [1, 2], ids=["no barrier", "the other group's element"])
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_global_accesses_no_named_barrier_orders_are_a_race(mode, schedule):
    err = race("exchange", (1,), (128,), (np.zeros(128, np.float32), np.zeros(128, np.float32), mode),
               schedule=schedule)
    assert err.array == "x" and err.block == err.other_block == (0, 0, 0)
    assert {err.line, err.other_line} == {line_of("EXCHANGE WRITE"), line_of("EXCHANGE READ")}
    if mode == 2:   # the two threads are of different groups
        assert err.thread[0] // 64 != err.other_thread[0] // 64


# ---- two blocks: a release and an acquire, each with a named barrier ---------------------------

def handoff_args(mode):
    return (np.zeros(2, np.int32), np.zeros(128, np.float32), np.zeros(128, np.float32), mode)


def test_a_handoff_with_named_barriers_for_syncthreads_is_clean(workers):
    checked = launch("handoff", (2,), (128,), handoff_args(0))
    plain = launch("handoff", (2,), (128,), handoff_args(0), check=False)
    np.testing.assert_array_equal(checked[2], neighbours())
    np.testing.assert_array_equal(plain[2], neighbours())


@pytest.mark.parametrize("mode", [1, 2, 3], ids=["no barrier before the release", "no barrier after the acquire",
                                                 "data the flag does not release"])
def test_a_handoff_missing_a_named_barrier_is_a_race(mode, workers):
    err = race("handoff", (2,), (128,), handoff_args(mode))
    assert err.array == "data" and err.block != err.other_block
    assert {err.line, err.other_line} == {line_of("HANDOFF WRITE"), line_of("HANDOFF READ")}
    if mode == 3:   # the writer is of the other group than the reader
        assert err.thread[0] // 64 != err.other_thread[0] // 64


# ---- the last-block pattern with a warpgroup's named barrier (stream-K's fixup) -----------------

def last_block_args(blocks, mode):
    return (np.zeros(blocks * 128, np.float32), np.zeros(2, np.uint32), np.zeros(128, np.float32), mode)


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_the_last_block_pattern_with_named_barriers_is_clean(workers, schedule):
    blocks = 3
    checked = launch("last_block", (blocks,), (128,), last_block_args(blocks, 0), schedule=schedule)
    plain = launch("last_block", (blocks,), (128,), last_block_args(blocks, 0), check=False)
    t = np.arange(128) % 64
    expected = (blocks + blocks * (blocks - 1) / 2 + blocks * t).astype(np.float32)
    np.testing.assert_array_equal(checked[2], expected)
    np.testing.assert_array_equal(plain[2], expected)
    assert checked[1].tolist() == [blocks, blocks]


@pytest.mark.parametrize("mode", [1, 2], ids=["no barrier before the fence", "no fence"])
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_the_last_block_pattern_without_its_barrier_or_fence_is_a_race(mode, workers, schedule):
    err = race("last_block", (3,), (128,), last_block_args(3, mode), schedule=schedule)
    assert err.array == "part" and err.block != err.other_block
    assert {err.line, err.other_line} == {line_of("PARTIAL WRITE"), line_of("PARTIAL READ")}
