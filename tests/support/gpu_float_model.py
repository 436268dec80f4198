"""NumPy models of the GPU's float instructions that the tests compare the CPU runtime with:
fma.rn.f32 rounded once, the .ftz flush, and ex2.approx.ftz, rcp.approx.ftz, rsqrt.approx.ftz and
sqrt.approx from the measured tables."""
import numpy as np

FLT_MIN = np.float32(2.0 ** -126)
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
