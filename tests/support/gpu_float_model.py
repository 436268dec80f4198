"""NumPy models of the GPU's float instructions that the tests compare the CPU runtime with:
fma.rn.f32 rounded once, the .ftz flush, cvt.rzi.s32, ex2.approx (.ftz or not), rcp.approx.ftz,
rsqrt.approx.ftz, sqrt.approx, div.approx, lg2.approx and sin.approx/cos.approx from the measured
tables; and the comparisons the math-function tests make (bits alike, ulps as the Programming Guide
counts)."""
import lzma
from functools import lru_cache

import numpy as np
import pytest

from cudacheck.cpu import gpumath

FLT_MIN = np.float32(2.0 ** -126)
# Why a GPU test does not compare the unflushed mode: CuPy compiles every kernel with -ftz=true
# appended after the caller's options (cupy/cuda/compiler.py), and NVRTC takes the last (it warns
# '"--ftz(-ftz)=false" followed by "--ftz(-ftz)=true"'), so through CuPy a GPU runs every kernel
# flushed, as the CPU runtime runs a RawModule whatever its -ftz says. The CPU runtime's -DKC_FTZ=0
# keeps subnormals, as nvcc's whole programs do by default; comparing that code needs a whole program.
CUPY_FORCES_FTZ = pytest.mark.skip(reason="through CuPy a GPU compiles every kernel -ftz=true (CuPy appends it): "
                                          "no CuPy kernel runs unflushed, as -DKC_FTZ=0 makes the CPU runtime")
# The CPU runtime's unflushed mode, for a RawModule: subnormals kept, as nvcc's whole programs keep them.
NO_FTZ = ("-DKC_FTZ=0",)
# The Programming Guide's bounds of __log2f, __logf and __log10f (lg2.approx) on [1/2, 2]: absolute.
LG2_GUIDE_NEAR_ONE = {"log2f": 2.0 ** -22, "logf": 2.0 ** -21.41, "log10f": 2.0 ** -24}


def flush(v):
    """An .ftz instruction's result: subnormals to zero of the same sign."""
    v = np.asarray(v, np.float32)
    return np.where(np.abs(v) < FLT_MIN, np.copysign(np.float32(0), v), v)


def fma(a, b, c):
    """fma.rn.f32: a * b + c rounded once. a * b is exact in float64 (24 + 24 bits); Knuth's
    two-sum gives the exact p + c as s + e; s rounded to odd where e != 0 (toward zero, the last
    bit set) keeps the information that a second rounding to 24 bits needs, so it is exact."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b
        s = p + c
        cs = s - p   # c's part of s
        e = (p - (s - cs)) + (c - cs)
        inexact = np.isfinite(s) & (e != 0)
        toward_zero = np.where(inexact & (np.sign(e) != np.sign(s)), np.nextafter(s, 0), s)
        odd = toward_zero.view(np.uint64) | inexact.astype(np.uint64)
        return odd.view(np.float64).astype(np.float32)


def rcp_approx_ftz(tables, y):
    """rcp.approx.ftz of float32 y: rcp(m) * 2^-e for y = m * 2^e, m in [1, 2); subnormal
    arguments are zeros (infinite reciprocals), subnormal results are flushed, NaN stays. tables:
    {name: gpumath.decode(name, ...)}."""
    y = np.asarray(y, np.float32)
    bits = y.view(np.uint32).astype(np.int64)
    e = ((bits >> 23) & 0xFF) - 127
    with np.errstate(over="ignore"):
        r = tables["rcp"][bits & 0x7FFFFF] * np.exp2(-e.astype(np.float64))
    r = np.where(e == -127, np.inf, r).astype(np.float32)
    r = np.where(np.abs(r) < FLT_MIN, np.float32(0), r)
    return np.where(np.isnan(y), y, np.copysign(r, y))


def ex2_approx_ftz(tables, y):
    """ex2.approx.ftz of float32 y: the table's entry for |y| truncated to 23 fractional bits,
    times 2^+-i; subnormal arguments are zeros (2^0 = 1), tiny results flushed, NaN stays, and
    past |y| = 256 the result is +inf or 0. tables: {name: gpumath.decode(name, ...)}."""
    y = flush(y)
    a = np.minimum(np.abs(np.nan_to_num(y).astype(np.float64)), 256.0)
    fixed = np.floor(a * 2.0 ** 23).astype(np.int64)
    i, f = fixed >> 23, fixed & ((1 << 23) - 1)
    with np.errstate(over="ignore"):
        v = np.where(y < 0, tables["ex2_neg"][f] * np.exp2(-i.astype(np.float64)),
                     tables["ex2_pos"][f] * np.exp2(i.astype(np.float64))).astype(np.float32)
    return np.where(np.isnan(y), y, flush(v))


def _root_rule(tables, name, x):
    """The table `name` ("rsqrt" or "sqrt") read by the rule: its entry for m times 2^-k (rsqrt)
    or 2^k (sqrt), for positive normal float32 x = m * 4^k, m in [1, 4) (other x: any value)."""
    bits = np.where(np.isfinite(x) & (x >= FLT_MIN), x, np.float32(1)).view(np.uint32).astype(np.int64)
    k = ((bits >> 23) - 127) >> 1
    scale = np.exp2((-k if name == "rsqrt" else k).astype(np.float64))
    return (tables[name][bits - (k << 24) - (127 << 23)] * scale).astype(np.float32)


def rsqrt_approx_ftz(tables, x):
    """rsqrt.approx.ftz of float32 x: rsqrt(m) * 2^-k for x = m * 4^k, m in [1, 4); +-0 (and
    subnormals) give +-inf, +inf gives 0, negative x and NaN give NaN."""
    x = flush(x)
    r = _root_rule(tables, "rsqrt", x)
    r = np.where(x == 0, np.copysign(np.float32(np.inf), x), np.where(x == np.inf, np.float32(0), r))
    return np.where(np.isnan(x) | (x < 0), np.float32(np.nan), r)


def sqrt_approx(tables, x, ftz):
    """sqrt.approx.f32 (.ftz where ftz) of float32 x: sqrt(m) * 2^k for x = m * 4^k, m in [1, 4);
    without .ftz a subnormal x gives the rule's result for x * 2^24, times 2^-12; +-0 and +inf
    are themselves, negative x and NaN give NaN."""
    x = np.asarray(x, np.float32)
    if ftz:
        x = flush(x)
    tiny = (x > 0) & (x < FLT_MIN)
    scaled = np.where(tiny, x * np.float32(2.0 ** 24), x)   # exact
    r = np.where(tiny, _root_rule(tables, "sqrt", scaled) * np.float32(2.0 ** -12), _root_rule(tables, "sqrt", x))
    r = np.where((x == 0) | (x == np.inf), x, r)
    return np.where(np.isnan(x) | (x < 0), np.float32(np.nan), r).astype(np.float32)


@lru_cache(maxsize=None)
def decoded_tables():
    """{name: float32 table} of gpumath.TABLES (ex2_pos, ex2_neg, rcp, rsqrt, sqrt), decoded once."""
    blob = lzma.decompress(gpumath.DATA.read_bytes())
    return {name: gpumath.decode(name, blob) for name, _ in gpumath.TABLES}


def bits(u):
    """float32 values from their bit patterns."""
    return np.asarray(u, np.uint32).view(np.float32)


def flusher(ftz):
    """What an instruction does to its float32 result: flushed under -ftz=true, else kept."""
    return flush if ftz else (lambda v: np.asarray(v, np.float32))


def cvt_rzi_s32(v):
    """cvt.rzi.s32.f32: truncated, saturated to int's range, NaN to 0; as uint32 (add.s32 and
    and.b32 see the bits)."""
    v = np.nan_to_num(v.astype(np.float64), nan=0.0, posinf=2.0 ** 31, neginf=-(2.0 ** 31))
    return np.clip(np.trunc(v), -(2 ** 31), 2 ** 31 - 1).astype(np.int64) & 0xFFFFFFFF


def ex2_approx(tables, y, ftz):
    """ex2.approx.f32: ex2.approx.ftz's table for normal results; without -ftz, for y below -126,
    the table's 2^(y/2) squared, rounded once (the SASS ptxas makes of it)."""
    v = ex2_approx_ftz(tables, y)
    if ftz:
        return v
    with np.errstate(invalid="ignore"):
        low = y < np.float32(-126)
    half = ex2_approx_ftz(tables, np.where(low, y * np.float32(0.5), 0)).astype(np.float64)
    return np.where(low, (half * half).astype(np.float32), v)


def div_approx(tables, x, y, ftz):
    """div.approx.f32 (.ftz): x times rcp.approx.ftz(y), rounded once (the product of two floats is
    exact in float64), flushed under -ftz=true."""
    fl = flusher(ftz)
    with np.errstate(invalid="ignore", over="ignore"):
        return fl(fl(x).astype(np.float64) * rcp_approx_ftz(tables, y).astype(np.float64))


def lg2_approx(x, ftz):
    """lg2.approx.f32 (.ftz) by the rule gpumath's docstring states, from its table (gpumath.lg2():
    T0, T1, then one bitmap per result binade): 2^e (1 + m 2^-23) gives T0[m] for e = 0, T1[m]
    for e = -1, else e + L[m] rounded toward zero (L[m] = T0[m] below 1/2, else 1 + T1[m]), one
    unit lower where the bitmap of its binade class has m; a subnormal x (kept without -ftz)
    lg2.approx(x 2^24) - 24; -inf for +-0, NaN for x < 0 and NaN, +inf for +inf."""
    words = gpumath.lg2()
    n = 1 << 23
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    if ftz:
        u = np.where(u & 0x7F800000 == 0, u & 0x80000000, u)
    subnormal = (u & 0x7F800000 == 0) & (u & 0x7FFFFFFF != 0)
    with np.errstate(over="ignore"):
        scaled = (u.astype(np.uint32).view(np.float32) * np.float32(2.0 ** 24)).view(np.uint32).astype(np.int64)
    v = np.where(subnormal, scaled, u)
    e, m = (v >> 23 & 0xFF) - 127, v & (n - 1)
    t0, t1 = bits(words[m]), bits(words[n + m])
    exact = e + np.where(t0 < 0.5, t0.astype(np.float64), 1.0 + t1.astype(np.float64))
    r = exact.astype(np.float32)
    r = np.where(np.abs(r.astype(np.float64)) > np.abs(exact), np.nextafter(r, np.float32(0)), r)
    size = np.maximum(np.where(e > 0, e, -e - 1), 1)
    k = np.floor(np.log2(size)).astype(np.int64) + np.where(e > 0, 0, 7)
    lower = words[2 * n + k * (n // 32) + (m >> 5)] >> (m & 31).astype(np.uint32) & 1
    r = np.where(lower == 1, bits(r.view(np.uint32) - np.uint32(1)), r)
    r = np.where(e == 0, t0, np.where(e == -1, t1, r))
    r = np.where(subnormal, r - np.float32(24), r)
    r = np.where(u & 0x7FFFFFFF == 0, np.float32(-np.inf), r)
    r = np.where((u >= 0x80000000) & (u != 0x80000000) | (u & 0x7FFFFFFF > 0x7F800000), np.float32(np.nan), r)
    return np.where(u == 0x7F800000, np.float32(np.inf), r).astype(np.float32)


def sin_approx(x, cosine):
    """sin.approx.f32 (cos.approx: cosine), .ftz or not alike, by the rule the H100's results were
    checked by (scripts/record_gpu_math_tables.py's sine_rule)."""
    from record_gpu_math_tables import sine_rule
    with np.errstate(invalid="ignore"):   # infinities and NaN: NaN
        return sine_rule(np, gpumath.sine(), np.asarray(x, np.float32).view(np.uint32), cosine)


def same_bits(a, b):
    """Equal bit patterns, every NaN alike (a GPU's NaN is 0x7FFFFFFF; the processor keeps a payload)."""
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def ulps(got, exact):
    """How many floats lie between got and the exact value rounded to float32: the Programming
    Guide's measure (its bounds are differences from the correctly rounded result), +-0 alike."""
    with np.errstate(over="ignore"):
        rounded = np.asarray(exact).astype(np.float32)
    return np.abs(_ordinal(got) - _ordinal(rounded))


def _ordinal(v):
    """float32 values as integers in their order, one apart for neighbours."""
    b = v.view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF), b)


def run_rows(source, rows, kernel, x, y, options, backend="cpu"):
    """Launch `kernel` of `source` (float32 out[rows * n], x[n], y[n], int n: one thread per
    element) on the CPU runtime or, through CuPy, on a GPU; its output as (rows, n)."""
    import cudacheck
    n = x.size
    grid, args = ((n + 255) // 256,), (np.int32(n),)
    if backend == "gpu":
        import cupy
        o = cupy.zeros(rows * n, cupy.float32)
        cudacheck.RawModule(source, backend="gpu", options=options).get_function(kernel)(
            grid, (256,), (o, cupy.asarray(x), cupy.asarray(y)) + args)
        return cupy.asnumpy(o).reshape(rows, n)
    o = np.zeros(rows * n, np.float32)
    cudacheck.RawModule(source, backend="cpu", options=options).get_function(kernel)(grid, (256,), (o, x, y) + args)
    return o.reshape(rows, n)


def run_packed(source, kernel, a, width, options=(), extra=(), backend="cpu"):
    """Launch `kernel(const float* a, float* o, int n, *extra)` of `source`, one thread per row of
    `a` (n, k), on the CPU runtime or, through CuPy, on a GPU; its output o as (n, width)."""
    import cudacheck
    n = a.shape[0]
    xp = np
    if backend == "gpu":
        import cupy as xp
    o = xp.zeros(width * n, xp.float32)
    cudacheck.RawModule(source, backend=backend, options=options).get_function(kernel)(
        ((n + 127) // 128,), (128,), (xp.asarray(a.ravel()), o, np.int32(n), *extra))
    return (o if xp is np else xp.asnumpy(o)).reshape(n, width)
