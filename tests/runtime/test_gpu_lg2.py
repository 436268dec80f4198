"""lg2.approx as the GPU computes it (__log2f, __logf, __log10f; logf, log2f and log10f under
--use_fast_math): the table's rule (cpu/gpumath.py) as the runtime applies it, the Programming
Guide's error bounds, the special values, and, on a GPU, the bits themselves."""
import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath
from tests.support.gpu_float_model import CUPY_FORCES_FTZ, LG2_GUIDE_NEAR_ONE, NO_FTZ, same_bits, ulps

KERNEL = r'''
extern "C" __global__ void intrinsic(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { o[i] = __log2f(x[i]); o[n + i] = __logf(x[i]); o[2 * n + i] = __log10f(x[i]); }
}
extern "C" __global__ void fast(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { o[i] = log2f(x[i]); o[n + i] = logf(x[i]); o[2 * n + i] = log10f(x[i]); }
}'''


def inputs(rng, n=20000):
    """Floats of every kind: each exponent's binade, subnormals, the two binades around 1."""
    e = rng.integers(-150, 128, n)
    m = rng.integers(0, 1 << 23, n, dtype=np.int64)
    bits = np.where(e < -126, m, ((e + 127) << 23) | m).astype(np.uint32)
    bits[:12] = [0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x3F800000, 0x3F7FFFFF, 0x3F800001, 0x7F7FFFFF,
                 0x7F800000, 0xBF800000, 0x7FC00000]
    return bits.view(np.float32)


def run(kernel, x, options, backend="cpu"):
    n = x.size
    if backend == "gpu":
        import cupy
        o = cupy.zeros(3 * n, cupy.float32)
        cudacheck.RawModule(KERNEL, backend="gpu", options=options).get_function(kernel)(
            (n // 256 + 1,), (256,), (o, cupy.asarray(x), np.int32(n)))
        return cupy.asnumpy(o).reshape(3, n)
    o = np.zeros(3 * n, np.float32)
    cudacheck.RawModule(KERNEL, backend="cpu", options=options).get_function(kernel)(
        (n // 256 + 1,), (256,), (o, x, np.int32(n)))
    return o.reshape(3, n)


@pytest.mark.parametrize("options", [NO_FTZ, ("-ftz=true",)], ids=["no-ftz", "ftz"])
def test_lg2_follows_its_rule_from_the_two_binades_around_one(options):
    """Away from [1/2, 2), lg2 of 2^e (1 + m 2^-23) is e + L[m] rounded toward zero, or one unit
    below it: L read back from the runtime's own results on [1, 2) and [1/2, 1)."""
    rng = np.random.default_rng()
    m = rng.integers(0, 1 << 23, 3000, dtype=np.uint32)
    t0 = run("intrinsic", (m | (127 << 23)).view(np.float32), options)[0]
    t1 = run("intrinsic", (m | (126 << 23)).view(np.float32), options)[0]
    L = np.where(t0 < 0.5, t0.astype(np.float64), 1.0 + t1.astype(np.float64))
    for e in rng.choice([e for e in range(-126, 128) if e not in (0, -1)], 6, replace=False):
        got = run("intrinsic", (m | np.uint32((e + 127) << 23)).view(np.float32), options)[0]
        v = e + L
        rz = v.astype(np.float32)
        rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(v), np.nextafter(rz, np.float32(0)), rz)
        below = rz.view(np.int32).astype(np.int64) - got.view(np.int32)
        assert set(np.unique(below)) <= {0, 1}, e
        assert (below == 0).mean() > 0.8, e


@pytest.mark.parametrize("options", [NO_FTZ, ("-ftz=true",)], ids=["no-ftz", "ftz"])
def test_the_intrinsics_keep_the_programming_guides_bounds(options):
    """The Programming Guide's table of intrinsic functions: __log2f within 2^-22 absolute on
    [1/2, 2] and within 2 ulp elsewhere, __logf within 2^-21.41 absolute on [1/2, 2]; __logf
    and __log10f are lg2 times ln 2 and log10(2) rounded to float."""
    x = inputs(np.random.default_rng())
    out = run("intrinsic", x, options)
    normal = (x > 0) & np.isfinite(x) & (x >= np.float32(2.0 ** -126))
    exact = np.log2(x[normal].astype(np.float64))
    near = (x[normal] >= 0.5) & (x[normal] <= 2)
    assert np.max(np.abs(out[0][normal][near] - exact[near])) <= LG2_GUIDE_NEAR_ONE["log2f"]
    far = ~near   # counted as the Guide counts: floats from the correctly rounded result (the result's own
    # spacing over-counted where it lies just below a power of two and the exact value just above)
    assert ulps(out[0][normal][far], exact[far]).max() <= 2
    assert np.max(np.abs(out[1][normal][near] - exact[near] * np.log(2))) <= LG2_GUIDE_NEAR_ONE["logf"]
    for row, c in ((1, 0x3F317218), (2, 0x3E9A209B)):
        scaled = out[0] * np.uint32(c).view(np.float32)
        if "-ftz=true" in options:
            scaled = np.where(np.abs(scaled) < 2.0 ** -126, np.float32(0), scaled)
        assert np.array_equal(out[row][~np.isnan(out[0])].view(np.uint32),
                              scaled[~np.isnan(out[0])].view(np.uint32))


def test_special_values():
    x = np.array([0.0, -0.0, 1.0, np.inf, -1.0, -np.inf, np.nan, 2.0 ** -149, 2.0 ** 100], np.float32)
    lg2 = run("intrinsic", x, NO_FTZ)[0]
    assert np.isneginf(lg2[:2]).all() and lg2[2] == 0 and lg2[3] == np.inf and np.isnan(lg2[4:7]).all()
    assert lg2[7] == -149 and lg2[8] == 100
    flushed = run("intrinsic", x, ("-ftz=true",))[0]
    assert np.isneginf(flushed[7])   # .ftz: a subnormal is zero


def test_fast_math_logs_are_the_intrinsics():
    x = inputs(np.random.default_rng())
    assert np.array_equal(run("fast", x, ("--use_fast_math",)).view(np.uint32),
                          run("intrinsic", x, ("-ftz=true",)).view(np.uint32))


def test_the_table_encodes_and_decodes_to_the_same_bits():
    """Tables shaped as the measured one is (steady steps, a few entries and set members
    anywhere): random words throughout would cost lzma a minute here, and test nothing more."""
    rng = np.random.default_rng()
    n = gpumath.LG2_ENTRIES

    def table():
        t = (np.arange(n, dtype=np.uint64) * rng.integers(1, 512)).astype(np.uint32)
        anywhere = rng.random(n) < 0.001
        t[anywhere] = rng.integers(0, 1 << 32, anywhere.sum(), dtype=np.uint64).astype(np.uint32)
        return t

    t0, t1 = table(), table()
    fixes = [rng.random(n) < 0.001 for _ in gpumath.LG2_CLASSES]
    words = gpumath.decode_lg2(gpumath.encode_lg2(t0, t1, fixes))
    assert np.array_equal(words[:n], t0) and np.array_equal(words[n:2 * n], t1)
    bits = np.unpackbits(words[2 * n:].view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(bits, np.concatenate(fixes))


@pytest.mark.gpu
@pytest.mark.parametrize("options", [pytest.param(NO_FTZ, marks=CUPY_FORCES_FTZ), ("-ftz=true",),
                                     ("--use_fast_math",)],
                         ids=["no-ftz", "ftz", "fast-math"])
def test_the_gpu_computes_the_same_bits(options):
    """The intrinsics in every mode; log2f, logf and log10f where --use_fast_math makes them the
    intrinsics (without it they are the precise functions, which this file does not test)."""
    x = inputs(np.random.default_rng(), 200000)
    for kernel in ("intrinsic", "fast") if "--use_fast_math" in options else ("intrinsic",):
        cpu, gpu = run(kernel, x, options), run(kernel, x, options, "gpu")
        same = same_bits(cpu, gpu)
        assert same.all(), (kernel, x[~same.all(axis=0)][:5])
