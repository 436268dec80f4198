"""Checked mode follows the scopes of CUDA's memory model (issue 45, item 2): an atomic or fence of
block scope (atomicAdd_block, atomicCAS_block, __threadfence_block(); inline PTX's .cta; libcu++'s
cuda::atomic_ref<T, cuda::thread_scope_block>) orders only the threads of its own block, so used
between blocks it is a race that names the scope and both threads; the same kernels within one
block, or with device or system scope, are clean and compute what plain runs compute."""
from functools import lru_cache

import numpy as np
import pytest

import cudacheck

SOURCE = r'''
// One counter for the whole grid: each block's threads add into it with the scope SCOPE names.
extern "C" __global__ void count_all(const int* in, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) ADD(count, 1);
}
// One counter per block: block scope is enough.
extern "C" __global__ void count_per_block(const int* in, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) atomicAdd_block(&count[blockIdx.x], 1);
}

// A spin lock guarding one sum, taken by thread 0 of every block with the scope SCOPE names.
extern "C" __global__ void locked_sum(const float* in, float* out, int* mutex, int n) {
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = blockIdx.x * blockDim.x; i < (blockIdx.x + 1) * blockDim.x && i < n; ++i) s += in[i];
        while (CAS(mutex, 0, 1) != 0) { }
        FENCE();
        out[0] += s;
        FENCE();
        EXCH(mutex, 0);
    }
}

// Block `producer` publishes data through a flag after a fence of the scope FENCE names; thread 0
// of the other block waits for it, then the block reads the data.
extern "C" __global__ void publish(volatile int* flag, float* data, int producer) {
    if (blockIdx.x == producer) {
        data[threadIdx.x] = threadIdx.x + 0.5f;
        __syncthreads();
        if (threadIdx.x == 0) {
            FENCE();
            flag[0] = 1;
        }
    } else {
        if (threadIdx.x == 0) while (flag[0] == 0) { }
        __syncthreads();
        data[blockDim.x + threadIdx.x] = 2.0f * data[threadIdx.x];
    }
}

// Within one block: warp 1 publishes to warp 0 through a flag after __threadfence_block(), which
// covers them both.
extern "C" __global__ void publish_in_block(volatile int* flag, int* out) {
    if (threadIdx.x == 40) {
        out[1] = 41;
        __threadfence_block();
        flag[0] = 1;
    }
    if (threadIdx.x == 0) {
        while (flag[0] != 1) { }
        out[0] = out[1] + 1;
    }
}
'''

# The scope each variant uses: its atomics and its fence.
SCOPES = {
    "block": dict(ADD="atomicAdd_block", CAS="atomicCAS_block", EXCH="atomicExch_block", FENCE="__threadfence_block"),
    "device": dict(ADD="atomicAdd", CAS="atomicCAS", EXCH="atomicExch", FENCE="__threadfence"),
    "system": dict(ADD="atomicAdd_system", CAS="atomicCAS_system", EXCH="atomicExch_system",
                   FENCE="__threadfence_system"),
}


@lru_cache(maxsize=None)
def module(scope, check=True):
    options = tuple(f"-D{k}={v}" for k, v in SCOPES[scope].items())
    return cudacheck.RawModule(code=SOURCE, backend="cpu", check=check, options=options)


def line_of(text):
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    assert len(lines) == 1, (text, lines)
    return lines[0]


def scoped_race(scope, name, grid, block, args):
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        module(scope).get_function(name)(grid, block, args)
    err = e.value
    assert err.block != err.other_block and err.scope == "block"
    text = str(err)
    assert "block scope" in text and "__threadfence()" in text
    assert f"thread {err.thread} of block {err.block}" in text
    assert f"thread {err.other_thread} of block {err.other_block}" in text
    return err


@pytest.mark.parametrize("scope", ["device", "system"])
def test_a_grid_wide_counter_with_device_or_system_scope_is_clean(rng, workers, scope):
    n = int(rng.integers(200, 900))
    x = rng.integers(-5, 5, n).astype(np.int32)
    for check in (True, False):
        count = np.zeros(1, np.int32)
        module(scope, check).get_function("count_all")((-(-n // 64),), (64,), (x, count, n))
        assert count[0] == (x > 0).sum()


def test_a_grid_wide_counter_with_block_scope_races_between_blocks(rng, workers):
    n = int(rng.integers(200, 900))
    x = rng.integers(1, 5, n).astype(np.int32)
    err = scoped_race("block", "count_all", (-(-n // 64),), (64,), (x, np.zeros(1, np.int32), n))
    assert err.array == "count" and err.index == (0,)
    assert err.line == err.other_line == line_of("ADD(count, 1)")
    assert "block-scoped atomic" in (err.op, err.other_op)


def test_block_scope_within_each_block_is_clean(rng, workers):
    n = int(rng.integers(200, 900))
    x = rng.integers(-5, 5, n).astype(np.int32)
    blocks = -(-n // 64)
    count = np.zeros(blocks, np.int32)
    module("block").get_function("count_per_block")((blocks,), (64,), (x, count, n))
    padded = np.concatenate([x, np.zeros(blocks * 64 - n, np.int32)]).reshape(blocks, 64)
    np.testing.assert_array_equal(count, (padded > 0).sum(axis=1))


@pytest.mark.parametrize("scope", ["device", "system"])
def test_a_lock_of_device_or_system_scope_orders_the_blocks(rng, workers, scope):
    n = int(rng.integers(300, 1000))
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    module(scope).get_function("locked_sum")((-(-n // 128),), (128,), (x, out, np.zeros(1, np.int32), n))
    assert abs(out[0] - x.astype(np.float64).sum()) <= 1e-4 * n   # float32 sums, in some order


def test_a_lock_taken_with_block_scope_by_different_blocks_is_a_race(rng, workers):
    n = int(rng.integers(300, 1000))
    x = rng.standard_normal(n).astype(np.float32)
    err = scoped_race("block", "locked_sum", (-(-n // 128),), (128,), (x, np.zeros(1, np.float32),
                                                                         np.zeros(1, np.int32), n))
    assert err.array in ("mutex", "out") and err.thread == err.other_thread == (0, 0, 0)


@pytest.mark.parametrize("scope", ["device", "system"])
def test_publishing_to_another_block_after_a_device_or_system_fence_is_clean(scope):
    before = cudacheck.config.workers
    cudacheck.config.workers = 2   # the waiting block and the publishing one side by side
    try:
        data = np.zeros(128, np.float32)
        module(scope).get_function("publish")((2,), (64,), (np.zeros(1, np.int32), data, 1))
        np.testing.assert_array_equal(data[64:], 2 * (np.arange(64) + 0.5))
    finally:
        cudacheck.config.workers = before


def test_publishing_to_another_block_after_a_block_fence_is_a_race_naming_the_scope():
    before = cudacheck.config.workers
    cudacheck.config.workers = 2
    try:
        err = scoped_race("block", "publish", (2,), (64,), (np.zeros(1, np.int32), np.zeros(128, np.float32), 1))
    finally:
        cudacheck.config.workers = before
    assert err.array == "data" and {err.block, err.other_block} == {(0, 0, 0), (1, 0, 0)}
    assert "__threadfence_block()" in str(err)


@pytest.mark.parametrize("check", [False, True])
def test_a_block_fence_orders_the_warps_of_its_own_block(check):
    out = np.zeros(2, np.int32)
    module("block", check).get_function("publish_in_block")((1,), (64,), (np.zeros(1, np.int32), out))
    np.testing.assert_array_equal(out, [42, 41])


# The same in inline PTX: SCOPE is each instruction's scope qualifier (cta, gpu or sys).
PTX_SOURCE = r'''
extern "C" __global__ void count_all(const int* in, unsigned* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) asm volatile("red.relaxed.SCOPE.global.add.u32 [%0], 1;" :: "l"(count) : "memory");
}

extern "C" __global__ void locked_sum(const float* in, float* out, unsigned* mutex, int n) {
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = blockIdx.x * blockDim.x; i < (blockIdx.x + 1) * blockDim.x && i < n; ++i) s += in[i];
        unsigned old;
        do {
            asm volatile("atom.acquire.SCOPE.global.cas.b32 %0, [%1], 0, 1;" : "=r"(old) : "l"(mutex) : "memory");
        } while (old != 0);
        out[0] += s;
        asm volatile("atom.release.SCOPE.global.exch.b32 %0, [%1], 0;" : "=r"(old) : "l"(mutex) : "memory");
    }
}

// Block 1 publishes with st.release, block 0 waits with ld.acquire, each of scope SCOPE; or with
// a fence of that scope before a relaxed store of device scope.
extern "C" __global__ void publish(unsigned* flag, float* data, int fenced) {
    if (blockIdx.x == 1) {
        data[threadIdx.x] = threadIdx.x + 0.5f;
        __syncthreads();
        if (threadIdx.x == 0) {
            if (fenced) asm volatile("fence.sc.SCOPE; st.relaxed.gpu.global.u32 [%0], 1;" :: "l"(flag) : "memory");
            else asm volatile("st.release.SCOPE.global.u32 [%0], 1;" :: "l"(flag) : "memory");
        }
    } else {
        unsigned seen = 0;
        if (threadIdx.x == 0)
            while (!seen) asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
        __syncthreads();
        data[blockDim.x + threadIdx.x] = 2.0f * data[threadIdx.x];
    }
}
'''


@lru_cache(maxsize=None)
def ptx_module(scope, check=True):
    return cudacheck.RawModule(code=PTX_SOURCE.replace("SCOPE", scope), backend="cpu", check=check)


@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_inline_ptx_atomics_carry_their_scope(rng, workers, scope):
    n = int(rng.integers(200, 900))
    x = rng.integers(-5, 5, n).astype(np.int32)
    blocks = -(-n // 64)
    y = rng.standard_normal(n).astype(np.float32)
    if scope == "cta":
        for name, args in (("count_all", (x, np.zeros(1, np.uint32), n)),
                           ("locked_sum", (y, np.zeros(1, np.float32), np.zeros(1, np.uint32), n))):
            with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
                ptx_module(scope).get_function(name)((blocks,), (64,), args)
            assert e.value.scope == "block" and e.value.block != e.value.other_block
        return
    for check in (True, False):
        count = np.zeros(1, np.uint32)
        ptx_module(scope, check).get_function("count_all")((blocks,), (64,), (x, count, n))
        assert count[0] == (x > 0).sum()
    out = np.zeros(1, np.float32)
    ptx_module(scope).get_function("locked_sum")((blocks,), (64,), (y, out, np.zeros(1, np.uint32), n))
    assert abs(out[0] - y.astype(np.float64).sum()) <= 1e-4 * n


@pytest.mark.parametrize("fenced", [0, 1])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_inline_ptx_release_and_fences_carry_their_scope(scope, fenced):
    before = cudacheck.config.workers
    cudacheck.config.workers = 2   # the waiting block and the publishing one side by side
    try:
        data = np.zeros(128, np.float32)
        call = ptx_module(scope).get_function("publish")
        if scope == "cta":
            with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
                call((2,), (64,), (np.zeros(1, np.uint32), data, fenced))
            assert e.value.array == "data" and e.value.scope == "block"
        else:
            call((2,), (64,), (np.zeros(1, np.uint32), data, fenced))
            np.testing.assert_array_equal(data[64:], 2 * (np.arange(64) + 0.5))
    finally:
        cudacheck.config.workers = before


# The same through libcu++'s cuda::atomic_ref, of scope thread_scope_SCOPE.
REF_SOURCE = r'''
#include <cuda/atomic>
extern "C" __global__ void count_all(const int* in, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_SCOPE> c(*count);
    if (i < n && in[i] > 0) c.fetch_add(1, cuda::memory_order_relaxed);
}
extern "C" __global__ void locked_sum(const float* in, float* out, int* mutex, int n) {
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = blockIdx.x * blockDim.x; i < (blockIdx.x + 1) * blockDim.x && i < n; ++i) s += in[i];
        cuda::atomic_ref<int, cuda::thread_scope_SCOPE> lock(*mutex);
        int expected = 0;
        while (!lock.compare_exchange_strong(expected, 1, cuda::memory_order_acquire)) expected = 0;
        out[0] += s;
        lock.store(0, cuda::memory_order_release);
    }
}
'''


@pytest.mark.parametrize("scope", ["block", "device", "system"])
def test_atomic_ref_carries_its_scope(rng, workers, scope):
    n = int(rng.integers(200, 900))
    x = rng.integers(-5, 5, n).astype(np.int32)
    y = rng.standard_normal(n).astype(np.float32)
    blocks = -(-n // 64)
    mod = cudacheck.RawModule(code=REF_SOURCE.replace("SCOPE", scope), backend="cpu", check=True)
    calls = (("count_all", (x, np.zeros(1, np.int32), n)),
             ("locked_sum", (y, np.zeros(1, np.float32), np.zeros(1, np.int32), n)))
    if scope == "block":
        for name, args in calls:
            with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
                mod.get_function(name)((blocks,), (64,), args)
            assert e.value.scope == "block" and e.value.block != e.value.other_block
        return
    for name, args in calls:
        mod.get_function(name)((blocks,), (64,), args)
    assert calls[0][1][1][0] == (x > 0).sum()
    assert abs(calls[1][1][1][0] - y.astype(np.float64).sum()) <= 1e-4 * n
