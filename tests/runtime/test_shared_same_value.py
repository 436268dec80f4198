"""Checked mode on stores of one value to shared memory (cpu/src/kc_check_races.cpp: held stores):
many threads storing identical bytes to one shared element with no barrier between is a
SameValueWriteWarning, as on global memory; a store of different bytes, or a read racing with the
stores, stays a SharedMemoryRaceError. Each kernel's result is checked against NumPy."""
import warnings

import numpy as np
import pytest

import cudacheck

SOURCE = r"""
extern "C" __global__ void any_positive(const float* x, int n, int* out) {
    __shared__ bool done;
    if (threadIdx.x == 0) done = false;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) done = true;   // SET
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = done;
}

// Each of four flags set by the threads whose value falls in its quarter: four elements, each
// stored by many threads with one value.
extern "C" __global__ void quarters(const float* x, int n, int* out) {
    __shared__ int seen[4];
    if (threadIdx.x < 4) seen[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) seen[min(3, max(0, int((x[i] + 2.0f)))) ] = 1;   // QUARTER
    __syncthreads();
    if (threadIdx.x < 4) out[blockIdx.x * 4 + threadIdx.x] = seen[threadIdx.x];
}

"""
# The slips that stay races: stores of different values, and a read racing with the stores (one
# kernel each, so that g++ merges no store of one with another's and each keeps its line).
SLIP = r"""
extern "C" __global__ void {name}(const float* x, int n, int* out) {{
    __shared__ int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && x[i] > 0.0f;
{body}
    __syncthreads();
    if (threadIdx.x == 0 && out[blockIdx.x] == 0) out[blockIdx.x] = flag;
}}
"""
SLIPS = {
    "slip_same": "    if (hit) flag = 1;   // SAME",
    "slip_different": "    if (hit) flag = threadIdx.x;   // DIFFERENT",
    "slip_one_differs": "    if (hit) flag = threadIdx.x == 5 ? 2 : 1;   // ONE DIFFERS",
    "slip_early_read": ("    if (hit) flag = 1;   // STORE\n"
                        "    if (threadIdx.x == 40) out[blockIdx.x] = flag + 10;   // EARLY READ"),
}
SOURCE += "".join(SLIP.format(name=name, body=body) for name, body in SLIPS.items())
LINES = {tag: i + 1 for i, text in enumerate(SOURCE.splitlines()) for tag in
         ("SET", "QUARTER", "SAME", "DIFFERENT", "ONE DIFFERS", "STORE", "EARLY READ") if f"// {tag}\n" in text + "\n"}


@pytest.fixture(scope="module")
def module():
    return cudacheck.RawModule(SOURCE, backend="cpu", check=True)


def inputs(rng, blocks, threads, n):
    """x of n values (n below blocks * threads: the last block's tail is idle), with positives in
    every block but the last, which gets none."""
    x = rng.standard_normal(n).astype(np.float32)
    x[(blocks - 1) * threads:] = -np.abs(x[(blocks - 1) * threads:]) - 0.5
    for b in range(blocks - 1):
        x[b * threads + rng.integers(threads)] = 1.0 + rng.random()
    return x


def test_many_threads_setting_a_shared_flag_is_a_warning_and_computes(module, rng):
    blocks, threads = 3, 96
    n = blocks * threads - 17
    x, out = inputs(rng, blocks, threads, n), np.zeros(blocks, np.int32)
    with pytest.warns(cudacheck.SameValueWriteWarning, match="every outcome is the same value") as w:
        module.get_function("any_positive")((blocks,), (threads,), (x, np.int32(n), out))
    expect = [np.any(x[b * threads:min(n, (b + 1) * threads)] > 0) for b in range(blocks)]
    np.testing.assert_array_equal(out, expect)
    assert len(w) == 1
    warning = w[0].message
    assert warning.array == "done" and warning.line == LINES["SET"] == warning.other_line
    assert warning.block == warning.other_block and warning.thread != warning.other_thread
    assert "SharedMemoryRaceError" in str(warning) and "of block" in str(warning)
    assert not issubclass(cudacheck.SameValueWriteWarning, cudacheck.KernelError)


def test_several_flags_each_set_by_many_threads(module, rng):
    blocks, threads = 2, 128
    n = blocks * threads - 5
    x, out = rng.uniform(-2.5, 2.5, n).astype(np.float32), np.zeros(4 * blocks, np.int32)
    with pytest.warns(cudacheck.SameValueWriteWarning) as w:
        module.get_function("quarters")((blocks,), (threads,), (x, np.int32(n), out))
    q = np.clip((x.astype(np.float64) + 2.0).astype(np.int64), 0, 3)   # int() truncates toward zero, as C++
    expect = [[int(np.any(q[b * threads:min(n, (b + 1) * threads)] == k)) for k in range(4)] for b in range(blocks)]
    np.testing.assert_array_equal(out.reshape(blocks, 4), expect)
    assert w[0].message.array == "seen" and w[0].message.line == LINES["QUARTER"]


def run_slip(module, rng, name):
    blocks, threads = 2, 64
    x, out = inputs(rng, blocks, threads, blocks * threads), np.zeros(blocks, np.int32)
    x[:threads] = np.abs(x[:threads]) + 0.25   # block 0: every thread stores
    module.get_function(name)((blocks,), (threads,), (x, np.int32(blocks * threads), out))
    return out


def test_the_same_value_from_the_slips_kernel_is_only_a_warning(module, rng):
    with pytest.warns(cudacheck.SameValueWriteWarning):
        out = run_slip(module, rng, "slip_same")
    np.testing.assert_array_equal(out, [1, 0])


@pytest.mark.parametrize("name, tag", [("slip_different", "DIFFERENT"), ("slip_one_differs", "ONE DIFFERS")])
def test_stores_of_different_values_stay_a_race(module, rng, name, tag):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cudacheck.SameValueWriteWarning)   # threads before 5 agree
        with pytest.raises(cudacheck.SharedMemoryRaceError, match="write after write") as e:
            run_slip(module, rng, name)
    assert e.value.array == "flag" and e.value.line == LINES[tag] == e.value.other_line
    if tag == "ONE DIFFERS":   # the first store that differs, against the one before it
        assert e.value.thread == (5, 0, 0)


def test_a_read_racing_with_the_stores_stays_a_race(module, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cudacheck.SameValueWriteWarning)
        with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
            run_slip(module, rng, "slip_early_read")
    assert e.value.array == "flag"
    assert {e.value.line, e.value.other_line} == {LINES["STORE"], LINES["EARLY READ"]}


# One store wider than the array's elements (a 4-byte store through a cast of a byte array) meets
# the check once per byte, all before it stores: a store held at its first byte is judged once the
# whole store is done, never at its own next byte, where memory still shows what it overwrites.
WIDE = r"""
extern "C" __global__ void wide(const int* value, unsigned char* out) {
    __shared__ unsigned char bytes[32];
    for (int i = 0; i < 8; ++i) reinterpret_cast<unsigned int*>(bytes)[i] = value[threadIdx.x];   // WIDE
    __syncthreads();
    if (threadIdx.x == 0) for (int i = 0; i < 32; ++i) out[i] = bytes[i];
}
"""


def test_a_wide_store_of_different_values_over_byte_elements_stays_a_race(rng):
    threads = int(rng.integers(2, 64))
    value = rng.integers(1, 1 << 30, threads).astype(np.int32)
    value[1] = value[0] ^ 0x01   # threads 0 and 1 differ in the first byte alone
    kernel = cudacheck.RawKernel(WIDE, "wide", backend="cpu", check=True)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="write after write") as e:
        kernel((1,), (threads,), (value, np.zeros(32, np.uint8)))
    assert e.value.array == "bytes" and e.value.index == (0,) and e.value.thread == (1, 0, 0)


def test_a_wide_store_of_one_value_over_byte_elements_is_a_warning(rng):
    threads = int(rng.integers(2, 64))
    value = np.full(threads, rng.integers(1, 1 << 30), np.int32)
    out = np.zeros(32, np.uint8)
    with pytest.warns(cudacheck.SameValueWriteWarning):
        cudacheck.RawKernel(WIDE, "wide", backend="cpu", check=True)((1,), (threads,), (value, out))
    np.testing.assert_array_equal(out, np.tile(value[:1].view(np.uint8), 8))
