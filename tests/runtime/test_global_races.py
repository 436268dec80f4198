"""Checked mode on global memory: every race between two threads of a launch is reported with
both accesses, whether the threads share a block or not and whatever the schedule or number
of workers; the fence- and atomic-based idioms that order blocks, and race-free kernels,
report nothing and compute what plain runs compute; blocks that wait for blocks that cannot
run are reported, never left to hang."""
from functools import lru_cache

import numpy as np
import pytest

import cudacheck

SOURCE = r'''
extern "C" __global__ void hist_plain(const int* in, int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) hist[in[i] % 16]++;
}

extern "C" __global__ void hist_atomic(const int* in, int* hist, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&hist[in[i] % 16], 1);
}

// A block's sum in part[0] (blockDim.x == 128).
__device__ void block_sum(float* part, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
}

extern "C" __global__ void sum_plain(const float* in, float* out, int n) {
    __shared__ float part[128];
    block_sum(part, in, n);
    if (threadIdx.x == 0) out[0] += part[0];
}

extern "C" __global__ void sum_atomic(const float* in, float* out, int n) {
    __shared__ float part[128];
    block_sum(part, in, n);
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

// NVIDIA's threadFenceReduction: the last block to finish adds the blocks' sums.
extern "C" __global__ void sum_last_block(const float* in, float* partial, float* out, unsigned* count, int n) {
    __shared__ float part[128];
    __shared__ bool last;
    block_sum(part, in, n);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = part[0];
        FENCE
        unsigned ticket = atomicInc(count, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float s = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) s += partial[b];
        out[0] = s;
        *count = 0;
    }
}

__device__ void lock(int* mutex) {
    while (atomicCAS(mutex, 0, 1) != 0) { }
    __threadfence();
}
__device__ void unlock(int* mutex) {
    __threadfence();
    atomicExch(mutex, 0);
}
extern "C" __global__ void sum_locked(const float* in, float* out, int* mutex, int n) {
    __shared__ float part[128];
    block_sum(part, in, n);
    if (threadIdx.x == 0) {
        lock(mutex);
        out[0] += part[0];
        unlock(mutex);
    }
}

extern "C" __global__ void matmul_no_block_idx(const float* M, const float* N, float* P, int w) {
    int row = threadIdx.y, col = threadIdx.x;
    if (row < w && col < w) {
        float s = 0.0f;
        for (int k = 0; k < w; ++k) s += M[row * w + k] * N[k * w + col];
        P[row * w + col] = s;
    }
}

extern "C" __global__ void matmul_index_slip(const float* M, const float* N, float* P, int w) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < w && col < w) {
        float s = 0.0f;
        for (int k = 0; k < w; ++k) s += M[row * w + k] * N[k * w + col];
        P[row * w + (col & ~1)] += s;
    }
}

extern "C" __global__ void shift_left(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) x[i] = x[i + 1];
}

extern "C" __global__ void add_one(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}

extern "C" __global__ void publish(volatile int* flag, float* data, int producer) {
    if (blockIdx.x == producer) {
        data[threadIdx.x] = threadIdx.x + 0.5f;
        __syncthreads();
        if (threadIdx.x == 0) {
            FENCE
            flag[0] = 1;
        }
    } else {
        if (threadIdx.x == 0) while (flag[0] == 0) { }
        __syncthreads();
        data[blockDim.x + threadIdx.x] = 2.0f * data[threadIdx.x];
    }
}

__device__ int counter;
extern "C" __global__ void count_plain(int* seen) {
    counter++;
    seen[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
extern "C" __global__ void count_atomic(int* seen) {
    atomicAdd(&counter, 1);
    seen[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

extern "C" __global__ void plain_and_atomic(int* c) {
    if (blockIdx.x == 1 && threadIdx.x == 3) c[0] = 5;
    else atomicAdd(c, 1);
}

extern "C" __global__ void cas_max(const float* in, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int* addr = (int*)result;
    int old = *addr, assumed;
    do {
        assumed = old;
        old = atomicCAS(addr, assumed, __float_as_int(fmaxf(in[i], __int_as_float(assumed))));
    } while (assumed != old);
}

extern "C" __global__ void cas_max_early_exit(const float* in, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int* addr = (int*)result;
    int old = *addr, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= in[i]) break;
        old = atomicCAS(addr, assumed, __float_as_int(in[i]));
    } while (assumed != old);
}

extern "C" __global__ void count_to_limit(int* c, int limit) {
    if (c[0] < limit) atomicAdd(c, 1);
}

extern "C" __global__ void same_value(int* flag) {
    flag[0] = 1;
}

// Block 0's thread i marks element i; the other blocks' thread i marks element (i * step) % n,
// all at one store: with step 1 each block repeats block 0's work, thread for thread; with any
// other odd step the marks meet by their targets, as a graph's frontier meets (Rodinia's bfs).
extern "C" __global__ void mark(int* seen, int n, int step, int value) {
    int i = threadIdx.x;
    int target = blockIdx.x == 0 ? i : (i * step) % n;
    seen[target] = value;
}

extern "C" __global__ void mark_by_block(int* seen, int n, int step, int value) {
    int i = threadIdx.x;
    int target = blockIdx.x == 0 ? i : (i * step) % n;
    seen[target] = value + blockIdx.x;
}

struct pair { short x, y; };
extern "C" __global__ void copy_pairs(const pair* in, pair* out, int bytes) {
    __builtin_memcpy(&out[threadIdx.x], &in[threadIdx.x], bytes);
}

extern "C" __global__ void handoff_atomic(int* flag, int* out) {
    if (threadIdx.x == 0) {
        while (atomicAdd(flag, 0) != 1) { }
        __threadfence();
        out[0] = out[1] + 1;
    }
    if (threadIdx.x == 40) {
        out[1] = 41;
        __threadfence();
        atomicExch(flag, 1);
    }
}

extern "C" __global__ void grid_max(const int* x, int* m, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicMax(m, x[i]);
}

extern "C" __global__ void wait_for_last(int* flag, float* out, int unused) {
    if (blockIdx.x == gridDim.x - 1) {
        if (threadIdx.x == 0) {
            __threadfence();
            atomicExch(flag, 1);
        }
    } else {
        if (threadIdx.x == 0) while (atomicAdd(flag, 0) == 0) { }
        __syncthreads();
        if (threadIdx.x == 0) out[blockIdx.x] = 1.0f;
    }
}

extern "C" __global__ void handoff_volatile(volatile int* flag, int* out) {
    if (threadIdx.x == 0) {
        while (flag[0] != 1) { }
        out[0] = 1;
    }
    if (threadIdx.x == 40) flag[0] = 1;
}
'''


def line_of(text):
    """The source line holding `text` (once)."""
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    assert len(lines) == 1, (text, lines)
    return lines[0]


@lru_cache(maxsize=None)
def module(check, fence=True):
    return cudacheck.RawModule(code=SOURCE, backend="cpu", check=check,
                               options=(f"-DFENCE={'__threadfence();' if fence else ''}",))


def launch(name, grid, block, args, check=True, fence=True, **kw):
    module(check, fence).get_function(name)(grid, block, args, **kw)
    return args


def race(name, grid, block, args, fence=True, **kw):
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        launch(name, grid, block, args, fence=fence, **kw)
    err = e.value
    assert isinstance(err, cudacheck.RaceError) and not isinstance(err, cudacheck.SharedMemoryRaceError)
    assert err.kernel == name
    text = str(err)
    for who in ((err.thread, err.block), (err.other_thread, err.other_block)):
        assert f"thread {who[0]} of block {who[1]}" in text
    assert (err.thread, err.block) != (err.other_thread, err.other_block)
    assert f"line {err.line}" in text and f"line {err.other_line}" in text
    return err


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_histogram_without_atomics_is_a_race_whatever_the_schedule(rng, workers, schedule):
    n = int(rng.integers(300, 2000))
    data = rng.integers(0, 1000, n).astype(np.int32)
    err = race("hist_plain", (-(-n // 64),), (64,), (data, np.zeros(16, np.int32), n), schedule=schedule)
    assert err.array == "hist" and 0 <= err.index[0] < 16
    assert err.line == err.other_line == line_of("hist[in[i] % 16]++")
    assert "atomicAdd(&hist[i], v)" in str(err) and "plain runs may still show the right result" in str(err)


def test_atomic_histogram_with_a_grid_stride_loop_is_clean_and_bit_identical(rng, workers):
    n = int(rng.integers(1000, 5000))
    data = rng.integers(0, 1000, n).astype(np.int32)
    checked = launch("hist_atomic", (7,), (96,), (data, np.zeros(16, np.int32), n))[1]
    plain = launch("hist_atomic", (7,), (96,), (data, np.zeros(16, np.int32), n), check=False)[1]
    np.testing.assert_array_equal(checked, np.bincount(data % 16, minlength=16))
    np.testing.assert_array_equal(checked, plain)


def test_blocks_adding_into_one_element_race_between_blocks(rng, workers):
    n = int(rng.integers(300, 1500))
    x = rng.standard_normal(n).astype(np.float32)
    err = race("sum_plain", (-(-n // 128),), (128,), (x, np.zeros(1, np.float32), n))
    assert err.block != err.other_block and err.thread == err.other_thread == (0, 0, 0)
    assert err.array == "out" and err.index == (0,)
    assert "Within one launch, threads of different blocks are ordered only through atomics" in str(err)


def test_atomic_and_locked_block_sums_are_clean(rng, workers):
    n = int(rng.integers(300, 1500))
    x = rng.standard_normal(n).astype(np.float32)
    blocks = -(-n // 128)
    for name, extra in (("sum_atomic", ()), ("sum_locked", (np.zeros(1, np.int32),))):
        out = launch(name, (blocks,), (128,), (x, np.zeros(1, np.float32), *extra, n))[1]
        assert abs(out[0] - x.astype(np.float64).sum()) < 1e-3 * n


def test_last_block_done_is_clean_with_its_fence_and_a_race_without(rng, workers):
    n = int(rng.integers(600, 3000))
    x = rng.standard_normal(n).astype(np.float32)
    blocks = -(-n // 128)

    def args():
        return (x, np.zeros(blocks, np.float32), np.zeros(1, np.float32), np.zeros(1, np.uint32), n)

    checked = launch("sum_last_block", (blocks,), (128,), args())
    plain = launch("sum_last_block", (blocks,), (128,), args(), check=False)
    assert abs(checked[2][0] - x.astype(np.float64).sum()) < 1e-3 * n
    assert checked[3][0] == 0
    np.testing.assert_array_equal(checked[1], plain[1])
    err = race("sum_last_block", (blocks,), (128,), args(), fence=False)
    assert err.array in ("partial", "count") and err.block != err.other_block


def test_matmul_that_forgets_block_idx_names_the_same_thread_of_two_blocks(rng, workers):
    w = 8
    M, N = rng.standard_normal((w, w)).astype(np.float32), rng.standard_normal((w, w)).astype(np.float32)
    err = race("matmul_no_block_idx", (2, 2), (8, 8), (M, N, np.zeros((w, w), np.float32), w))
    assert err.thread == err.other_thread and err.block != err.other_block
    assert err.hazard == "write-write" and err.array == "P"
    assert "does the index use blockIdx?" in str(err)


def test_index_slip_in_one_block_is_a_race_within_the_block(rng):
    w = int(rng.integers(5, 12))
    M, N = rng.standard_normal((w, w)).astype(np.float32), rng.standard_normal((w, w)).astype(np.float32)
    err = race("matmul_index_slip", (1, 1), (16, 16), (M, N, np.zeros((w, w), np.float32), w))
    assert err.block == err.other_block == (0, 0, 0)
    assert abs(err.thread[0] - err.other_thread[0]) == 1 and err.thread[1] == err.other_thread[1]
    assert "no __syncthreads() between the two accesses" in str(err)


def test_in_place_shift_races_inside_a_block_and_across_blocks(rng, workers):
    n = 200
    err = race("shift_left", (4,), (64,), (rng.standard_normal(n).astype(np.float32), n))
    assert err.array == "x" and err.hazard == "read-write"
    assert abs(err.thread[0] - err.other_thread[0]) in (1, 63)


def test_overlapping_views_race_and_disjoint_ones_do_not(rng, workers):
    x = rng.standard_normal(300).astype(np.float32)
    err = race("add_one", (3,), (100,), (x[:-1], x[1:], 299))
    assert {err.array, "in", "out"} == {"in", "out"}
    y = x.copy()
    launch("add_one", (3,), (100,), (y[:150], y[150:], 150))
    np.testing.assert_array_equal(y[150:], x[:150] + np.float32(1))


def test_separate_launches_are_ordered(rng, workers):
    x = rng.standard_normal(500).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    launch("add_one", (5,), (100,), (x, y, 500))
    launch("add_one", (5,), (100,), (y, z, 500))
    np.testing.assert_array_equal(z, (x + np.float32(1)) + np.float32(1))


def test_flag_publication_with_a_fence_is_clean_and_without_is_a_race():
    before = cudacheck.config.workers
    cudacheck.config.workers = 2   # the waiting block and the publishing one side by side
    try:
        flag, data = np.zeros(1, np.int32), np.zeros(128, np.float32)
        launch("publish", (2,), (64,), (flag, data, 1))
        np.testing.assert_array_equal(data[64:], 2 * (np.arange(64) + 0.5))
        err = race("publish", (2,), (64,), (np.zeros(1, np.int32), np.zeros(128, np.float32), 1), fence=False)
        assert err.array == "data" and {err.block, err.other_block} == {(0, 0, 0), (1, 0, 0)}
    finally:
        cudacheck.config.workers = before


def test_device_variable_counter(workers):
    seen = np.zeros(128, np.int32)
    err = race("count_plain", (2,), (64,), (seen,))
    assert err.array == "counter"
    mod = module(True)
    mod.get_global("counter").array[...] = 0
    mod.get_function("count_atomic")((2,), (64,), (seen,))
    assert mod.get_global("counter").array.item() == 128


def test_plain_accesses_against_atomics_race_but_a_compare_and_swap_loop_does_not(rng, workers):
    err = race("plain_and_atomic", (2,), (32,), (np.zeros(1, np.int32),))
    assert "atomic" in (err.op, err.other_op) and "atomics order only other atomics" in str(err)
    assert {err.line, err.other_line} == {line_of("c[0] = 5"), line_of("else atomicAdd(c, 1)")}
    err = race("count_to_limit", (4,), (64,), (np.zeros(1, np.int32), 100))
    assert {err.op, err.other_op} == {"read", "atomic"} and err.line == line_of("if (c[0] < limit)")
    x = rng.standard_normal(700).astype(np.float32)
    out = launch("cas_max", (6,), (128,), (x, np.full(1, -np.inf, np.float32), 700))[1]
    assert out[0] == x.max()
    # a plain read that decides to skip the compare-and-swap is a read the CAS never checks
    err = race("cas_max_early_exit", (6,), (128,), (x, np.full(1, -np.inf, np.float32), 700))
    assert {err.op, err.other_op} == {"read", "atomic"}


def test_stores_of_one_value_are_a_warning_and_of_different_values_a_race():
    with pytest.warns(cudacheck.SameValueWriteWarning, match="every outcome is the same value") as w:
        flag = launch("same_value", (2,), (32,), (np.zeros(1, np.int32),))[0]
    assert flag[0] == 1 and len(w) == 1 and w[0].message.array == "flag"
    err = race("count_plain", (2,), (64,), (np.zeros(128, np.int32),))
    assert err.hazard in ("write-write", "read-write") and err.array == "counter"


@pytest.mark.parametrize("blocks", [2, 3])
def test_writes_that_meet_by_their_targets_are_the_warning_even_where_one_thread_index_meets_itself(blocks):
    # step 3: block 1's thread 0 meets block 0's thread 0 at element 0, and thread 11 meets thread 1
    # at element 1; one value, so every outcome is the same
    with pytest.warns(cudacheck.SameValueWriteWarning, match="every outcome is the same value"):
        seen = launch("mark", (blocks,), (32,), (np.zeros(32, np.int32), np.int32(32), np.int32(3), np.int32(1)))[0]
    assert seen.tolist() == [1] * 32


def test_a_grid_that_repeats_one_blocks_work_is_a_race_even_of_one_value():
    err = race("mark", (2,), (32,), (np.zeros(64, np.int32), np.int32(64), np.int32(1), np.int32(1)))
    assert err.array == "seen" and err.hazard == "write-write"
    assert err.thread == err.other_thread and {err.block, err.other_block} == {(0, 0, 0), (1, 0, 0)}


def test_writes_that_meet_by_their_targets_with_different_values_are_a_race():
    # the value differs by block: the meeting stores race, whichever threads they are
    err = race("mark_by_block", (2,), (32,), (np.zeros(32, np.int32), np.int32(32), np.int32(3), np.int32(0)))
    assert err.array == "seen"


@pytest.mark.parametrize("check", [False, True])
def test_a_thread_waiting_for_another_of_its_block_gets_its_turn(check):
    out = launch("handoff_atomic", (1,), (64,), (np.zeros(1, np.int32), np.zeros(2, np.int32)), check=check)[1]
    np.testing.assert_array_equal(out, [42, 41])


@pytest.mark.parametrize("check", [False, True])
def test_a_volatile_poll_gets_its_turn(check):
    out = launch("handoff_volatile", (1,), (64,), (np.zeros(1, np.int32), np.zeros(1, np.int32)), check=check)[1]
    assert out[0] == 1


@pytest.mark.parametrize("kernel,check", [("wait_for_last", False), ("wait_for_last", True), ("publish", False),
                                          ("publish", True)])
def test_a_block_waiting_for_a_block_that_cannot_run_is_reported(kernel, check):
    """Block 0 waits for a later block, which one worker would start only after it: through
    an atomic poll or a volatile one."""
    before = cudacheck.config.workers
    cudacheck.config.workers = 1
    try:
        with pytest.raises(cudacheck.ForwardProgressError) as e:
            launch(kernel, (2,), (64,), (np.zeros(1, np.int32), np.zeros(128, np.float32), 1), check=check)
    finally:
        cudacheck.config.workers = before
    err = e.value
    assert err.block == (0, 0, 0) and err.thread == (0, 0, 0)
    text = str(err)
    assert "cooperative launch" in text and "polls flag[0]" in text and "0 of 2 blocks had finished" in text
    if check:
        assert err.line == line_of({"publish": "while (flag[0] == 0) { }",
                                    "wait_for_last": "while (atomicAdd(flag, 0) == 0) { }"}[kernel])
        assert f"line {err.line}" in text


def test_blocks_waiting_for_each_other_run_when_they_run_side_by_side(rng):
    before = cudacheck.config.workers
    cudacheck.config.workers = 2
    try:
        for check in (False, True):
            out = launch("wait_for_last", (2,), (64,), (np.zeros(1, np.int32), np.zeros(2, np.float32), 0),
                         check=check)[1]
            np.testing.assert_array_equal(out, [1, 0])
    finally:
        cudacheck.config.workers = before


PROGRAM = r'''
#include <cstdio>
__device__ int launches;
__global__ void hist(const int* in, int* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) UPDATE;
    if (i == 0) launches++;
}
int main() {
    const int n = 4096;
    static int hin[n], hh[16];
    for (int i = 0; i < n; ++i) hin[i] = (i * 7919) % 1000;
    int *din, *dh;
    cudaMalloc(&din, n * sizeof(int));
    cudaMalloc(&dh, 16 * sizeof(int));
    cudaMemcpy(din, hin, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(dh, 0, 16 * sizeof(int));
    hist<<<16, 256>>>(din, dh, n);
    hist<<<16, 256>>>(din, dh, n);
    cudaMemcpy(hh, dh, 16 * sizeof(int), cudaMemcpyDeviceToHost);
    int total = 0;
    for (int b = 0; b < 16; ++b) total += hh[b];
    printf("histogram total %d of %d\n", total, 2 * n);
    cudaFree(din);
    cudaFree(dh);
    return 0;
}
'''


def test_a_whole_programs_device_memory_is_checked_for_races():
    racy = PROGRAM.replace("UPDATE", "h[in[i] % 16]++")
    assert "histogram total 8192 of 8192" in cudacheck.run_program(racy, backend="cpu").stdout
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        cudacheck.run_program(racy, backend="cpu", check=True)
    assert e.value.array == "h" and e.value.line == e.value.other_line == 6
    fixed = PROGRAM.replace("UPDATE", "atomicAdd(&h[in[i] % 16], 1)")
    assert "histogram total 8192 of 8192" in cudacheck.run_program(fixed, backend="cpu", check=True).stdout


def test_a_copy_past_its_element_races_with_the_next_threads(rng):
    pair = np.dtype([("x", "<i2"), ("y", "<i2")])
    src = rng.integers(-100, 100, 128).astype(np.int16).view(pair)
    out = launch("copy_pairs", (1,), (32,), (src, np.zeros(32, pair), 4))[1]
    np.testing.assert_array_equal(out, src[:32])
    err = race("copy_pairs", (1,), (32,), (src, np.zeros(33, pair), 5))
    assert err.array == "out" and err.hazard == "write-write" and abs(err.thread[0] - err.other_thread[0]) == 1


@pytest.mark.parametrize("check", [False, True])
def test_atomics_that_leave_a_value_unchanged_are_not_taken_for_waiting(rng, check):
    """A grid-stride atomicMax whose maximum is found early polls one location that no
    longer changes, thousands of times a thread: it is working, not waiting."""
    before = cudacheck.config.workers
    cudacheck.config.workers = 2
    try:
        for x in (rng.integers(0, 10**6, 1 << 18).astype(np.int32), np.full(1 << 18, 7, np.int32)):
            out = launch("grid_max", (4,), (128,), (x, np.zeros(1, np.int32), x.size), check=check)[1]
            assert out[0] == x.max()
    finally:
        cudacheck.config.workers = before
