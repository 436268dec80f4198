"""The special-function unit's tables (cudacheck/cpu/gpumath.py): what the stored file holds,
and the CPU runtime's __expf and rsqrtf looking them up, on fresh random inputs, bit for bit
against a NumPy model of the lookup. (tests/runtime/test_gpu_semantics.py holds expf, tanhf, rsqrtf,
rnorm3df and __expf to what an H100 computed.)"""
import lzma

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath


@pytest.fixture(scope="module")
def blob():
    return lzma.decompress(gpumath.DATA.read_bytes())


@pytest.fixture(scope="module")
def tables(blob):
    return {name: gpumath.decode(name, blob) for name, _ in gpumath.TABLES}


def _ulps(got, exact):
    """|got - exact| in units of the last place of float32 at `exact`."""
    return np.abs(got.astype(np.float64) - exact) / np.spacing(exact.astype(np.float32)).astype(np.float64)


def test_the_file_holds_the_four_tables_as_encode_writes_them(blob, tables):
    assert len(blob) == sum(n for _, n in gpumath.TABLES) // 2
    assert gpumath.encode(tables) == gpumath.DATA.read_bytes()


def test_the_tables_are_the_functions_within_the_ptx_bounds(tables):
    """Each table is its function to a relative error below 2^-22, and monotone."""
    i = np.arange(1 << 23, dtype=np.float64)
    f = i * 2.0 ** -23
    for name, exact, step in (("ex2_pos", np.exp2(f), 1), ("ex2_neg", np.exp2(-f), -1), ("rcp", 1 / (1 + f), -1),
                              ("rsqrt", 1 / np.sqrt(np.concatenate([1 + f, 2 + 2 * f])), -1)):
        t = tables[name]
        assert (np.abs(t / exact - 1)).max() < 2.0 ** -22, name
        assert (np.diff(t.astype(np.float64)) * step >= 0).all(), name


SOURCE = r'''
extern "C" __global__ void sfu(const float* x, float* fast_exp, float* rs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { fast_exp[i] = __expf(x[i]); rs[i] = rsqrtf(fabsf(x[i])); }
}
'''


def _ex2(tables, y):
    """ex2.approx.ftz of float32 y: the table's entry for |y| truncated to 23 fractional bits,
    times 2^+-i; tiny results flushed."""
    a = np.abs(y.astype(np.float64))
    fixed = np.floor(a * 2.0 ** 23).astype(np.int64)
    i, f = fixed >> 23, fixed & ((1 << 23) - 1)
    v = np.where(y < 0, tables["ex2_neg"][f] * np.exp2(-i.astype(np.float64)),
                 tables["ex2_pos"][f] * np.exp2(i.astype(np.float64))).astype(np.float32)
    return np.where(np.abs(v) < np.float32(2.0 ** -126), np.float32(0), v)


def _rsqrt(tables, x):
    bits = x.view(np.uint32).astype(np.int64)
    k = ((bits >> 23) - 127) >> 1
    return (tables["rsqrt"][bits - (k << 24) - (127 << 23)] * np.exp2(-k.astype(np.float64))).astype(np.float32)


def test_fast_exp_and_rsqrt_look_the_tables_up(tables):
    rng = np.random.default_rng()
    n = 5000
    x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-20, 6.4, n)).astype(np.float32)
    fast_exp, rs = np.zeros(n, np.float32), np.zeros(n, np.float32)
    cudacheck.RawKernel(SOURCE, "sfu", backend="cpu")(((n + 255) // 256,), (256,), (x, fast_exp, rs, np.int32(n)))
    log2e = np.float32(1.4426950216293335)
    assert np.array_equal(fast_exp.view(np.uint32), _ex2(tables, (x * log2e).astype(np.float32)).view(np.uint32))
    assert np.array_equal(rs.view(np.uint32), _rsqrt(tables, np.abs(x)).view(np.uint32))
    assert _ulps(rs, 1 / np.sqrt(np.abs(x.astype(np.float64)))).max() < 2.0
