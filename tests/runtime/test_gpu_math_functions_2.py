"""CUDA's own powf, cbrtf, log2f and log10f (nvcc's and NVRTC's defaults, -ftz=true and
--use_fast_math), powf of constant exponents, __powf and __tanf (and --use_fast_math's powf and
tanf, which are those) as the CPU runtime computes them (cpu/src/kc_gpu_math.h): bit for bit
against an independent NumPy model of the PTX of CUDA 13.0 (sm_90) on fresh floats of every
magnitude and the special values; within the Programming Guide's error bounds of float64; their
float overloads and spellings; and, on a GPU, against the GPU's bits."""
import numpy as np
import pytest

import cudacheck
from tests.support import gpu_float_model as gm
from tests.support.gpu_float_model import bits, same_bits, ulps

KERNEL = r'''
extern "C" __global__ void NAME(float* o, const float* x, const float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], w = y[i];
    o[i] = POW(v, w); o[n + i] = CBRT(v); o[2 * n + i] = LOG2(v); o[3 * n + i] = LOG10(v);
    o[4 * n + i] = __powf(v, w); o[5 * n + i] = __tanf(v); o[6 * n + i] = TAN(v);
    o[7 * n + i] = POW(v, 2.0f); o[8 * n + i] = POW(v, 0.5f); o[9 * n + i] = POW(v, 3.0f);
    o[10 * n + i] = POW(v, -1.0f); o[11 * n + i] = POW(2.0f, w);
}'''
SPELLINGS = {"named": ("powf", "cbrtf", "log2f", "log10f", "tanf"),
             "overloads": ("pow", "cbrt", "log2", "log10", "tan"),
             "qualified": ("::pow", "::cbrtf", "::log2", "::log10", "::tan")}
PLACEHOLDERS = ("POW", "CBRT", "LOG2", "LOG10", "TAN")
ROWS = ("powf", "cbrtf", "log2f", "log10f", "__powf", "__tanf", "tanf", "powf(x, 2)", "powf(x, 0.5)",
        "powf(x, 3)", "powf(x, -1)", "powf(2, y)")
# the constant exponents' rows: (row, x or None for the kernel's x, y or None for the kernel's y)
CONSTANT = ((7, None, 2.0), (8, None, 0.5), (9, None, 3.0), (10, None, -1.0), (11, 2.0, None))
NO_FTZ, FTZ, FAST = gm.NO_FTZ, ("-ftz=true",), ("--use_fast_math",)
# The Programming Guide's maximum ulp errors (full range) from the correctly rounded result
# ("Single-Precision Mathematical Standard Library Functions"): powf 4, cbrtf 1, log2f 1, log10f 2.
BOUNDS = {"powf": 4, "cbrtf": 1, "log2f": 1, "log10f": 2}


def _kernel(name, spelled):
    kernel = KERNEL.replace("NAME", name)
    for key, value in sorted(zip(PLACEHOLDERS, spelled), key=lambda item: -len(item[0])):   # LOG10 before LOG2
        kernel = kernel.replace(key, value)
    return kernel


SOURCE = "".join(_kernel(name, spelled) for name, spelled in SPELLINGS.items())
SPECIAL_X = bits([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x80000001, 0x007FFFFF,
                  0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F7FFFFF, 0x3F800001, 0x3F3504F3,
                  0x3F3504F4, 0x40000000, 0xC0000000, 0x3F000000, 0xBF000000, 0x4B800001, 0x3F2AAAAB, 0x3F2AAAAA])
SPECIAL_Y = np.array([0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149, 1, -1, 2, 3, -3, 0.5, -0.5, 2.5, 2 ** 24 + 2,
                      2 ** 24 - 1, 1e30, -1e30, 127, -126, -149, -150, 128], np.float32)


def inputs(rng, n=100000):
    """(x, y): x of every binade and sign (subnormals too) with y that puts y log2|x| anywhere in
    [-160, 160] (pow's overflow at 128, its subnormal results below -126, zero below -150, the
    cut at 152); x near 1 and near log's splits; y integers (odd and even, past 2^24) for x < 0;
    and every special x against every special y."""
    e = rng.integers(-150, 128, n)
    m = rng.integers(0, 1 << 23, n, dtype=np.int64)
    signs = rng.integers(0, 2, n, dtype=np.uint32) << 31
    x = (np.where(e < -126, m, ((e + 127) << 23) | m).astype(np.uint32) | signs).view(np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = (rng.uniform(-160, 160, n) / np.log2(np.abs(x.astype(np.float64)))).astype(np.float32)
    q = n // 8
    y[:q] = rng.integers(-300, 300, q).astype(np.float32)                                  # integers
    y[q: 2 * q] = (rng.integers(-2 ** 25, 2 ** 25, q) * 2.0 ** rng.integers(-3, 8, q)).astype(np.float32)
    near_one = (np.float32(1).view(np.int32) + rng.integers(-5000, 5000, q)).astype(np.int32).view(np.float32)
    x[2 * q: 3 * q] = near_one * rng.choice(np.float32([1, -1]), q)
    y[2 * q: 3 * q] = (2.0 ** rng.uniform(-20, 30, q) * rng.choice([1, -1], q)).astype(np.float32)
    splits = bits([0x3F3504F3, 0x3F2AAAAB, 0x3F800000]).view(np.int32)   # the logarithms' splits, 1
    around = np.repeat(splits, 1000) + np.tile(np.arange(-500, 500), 3)
    x[3 * q: 3 * q + 3000] = around.astype(np.int32).view(np.float32)
    y[np.isnan(y)] = np.float32(1.5)
    pairs = SPECIAL_X.size * SPECIAL_Y.size
    x[-pairs:] = np.repeat(SPECIAL_X, SPECIAL_Y.size)
    y[-pairs:] = np.tile(SPECIAL_Y, SPECIAL_X.size)
    return x, y


def run(kernel, x, y, options, backend="cpu"):
    return gm.run_rows(SOURCE, len(ROWS), kernel, x, y, options, backend)


@pytest.fixture(scope="module")
def tables():
    return gm.decoded_tables()


# -- a NumPy model of nvcc's PTX (CUDA 13.0), instruction by instruction ------------------------

def _poly(coefficients, t, fl):
    """Horner's rule by fused multiply-adds: ((c0 t + c1) t + c2) ..."""
    p = fl(gm.fma(bits(coefficients[0]), t, bits(coefficients[1])))
    for c in coefficients[2:]:
        p = fl(gm.fma(p, t, bits(c)))
    return p


def _split(x, split, scale, fl):
    """x (or x 2^scale below the normal range, zero and negative x included; scale None where the
    PTX has no such step: powf's under -ftz) as 2^e m, m in [split, 2 split), by integer
    arithmetic on the bits: (y, y's bits, m, e)."""
    tiny = (x < gm.FLT_MIN) if scale is not None else np.zeros(x.shape, bool)
    y = np.where(tiny, fl(x * np.float32(2.0 ** (scale or 0))), x)
    u = y.view(np.uint32).astype(np.int64)
    k = (u - split) & 0xFF800000
    m = ((u - k) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    ki = np.where(k >= 2 ** 31, k - 2 ** 32, k).astype(np.float32)   # cvt.rn.f32.s32 of k's bits (exact)
    e = fl(gm.fma(ki, bits(0x34000000), np.where(tiny, np.float32(-(scale or 0)), np.float32(0))))
    return y, u, m, e


def model_log2(x, ftz):
    fl = gm.flusher(ftz)
    x = fl(x)
    with np.errstate(invalid="ignore", over="ignore"):
        y, u, m, e = _split(x, 0x3F3504F3, 23, fl)
        f = fl(m + np.float32(-1))
        p = _poly((0x3DC6B27F, 0xBE2C7F30, 0x3E2FCF2A, 0xBE374E43, 0x3E520BF4, 0xBE763C8B, 0x3E93BF99, 0xBEB8AA49,
                   0x3EF6384A, 0xBF38AA3B), f, fl)
        r = fl(e + fl(gm.fma(f, bits(0x3FB8AA3B), fl(f * fl(f * p)))))
        r = np.where(u >= 0x7F800000, fl(gm.fma(y, np.float32(np.inf), np.float32(np.inf))), r)
    return np.where(y == 0, np.float32(-np.inf), r)


def model_log10(x, ftz):
    """logf's body (m in [2/3, 4/3)) times log10(e) rounded to float."""
    fl = gm.flusher(ftz)
    x = fl(x)
    with np.errstate(invalid="ignore", over="ignore"):
        y, u, m, e = _split(x, 0x3F2AAAAB, 23, fl)
        f = fl(m + np.float32(-1))
        p = _poly((0xBE055027, 0x3E1039F6, 0xBDF8CDCC, 0x3E0F2955, 0xBE2AD8B9, 0x3E4CED0B, 0xBE7FFF22, 0x3EAAAA78,
                   0xBF000000), f, fl)
        r = fl(gm.fma(e, bits(0x3F317218), fl(gm.fma(fl(f * p), f, f))))
        r = np.where(u >= 0x7F800000, fl(gm.fma(y, np.float32(np.inf), np.float32(np.inf))), r)
        r = fl(r * bits(0x3EDE5BD9))
    return np.where(y == 0, np.float32(-np.inf), r)


def model_cbrt(tables, x, ftz):
    fl = gm.flusher(ftz)
    x = fl(x)
    a = np.abs(x)
    with np.errstate(invalid="ignore", over="ignore"):
        r = gm.ex2_approx_ftz(tables, fl(gm.lg2_approx(a, ftz) * bits(0xBF2AAAAB)))
        s = fl(a * r)
        t = fl(r * s)
        err = fl(gm.fma(s, -t, np.float32(1)))
        v = fl(gm.fma(s, fl(err * bits(0x3EAAAAAB)), s))
        v = np.where(x < 0, -v, v)
        twice = fl(x + x)
    return np.where(twice == x, twice, v)


def model_pow(tables, x, y, ftz):
    fl = gm.flusher(ftz)
    f32 = np.float32
    x, y = fl(x), fl(y)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        h = np.trunc(fl(y * f32(0.5)))
        odd = np.abs(fl(y - fl(h + h)))
        ax = np.abs(x)
        _, _, m, e = _split(ax, 0x3F3504F3, None if ftz else 24, fl)
        log2e = bits(0x3FB8AA3B)
        f = fl(m + f32(-1))
        rc = gm.rcp_approx_ftz(tables, fl(m + f32(1)))
        u = fl(fl(f + f) * rc)
        u2 = fl(u * u)
        d = fl(f - u)
        ul = fl(rc * fl(gm.fma(-u, f, fl(d + d))))
        p = fl(_poly((0x3A2C32E4, 0x3B52E7DB, 0x3C93BB73, 0x3DF6384F), u2, fl) * u2)
        hi = fl(gm.fma(u, log2e, e))
        lo = fl(gm.fma(u, log2e, fl(e - hi)))
        lo = fl(gm.fma(ul, log2e, lo))
        lo = fl(gm.fma(u, bits(0x32A55E34), lo))
        lo = fl(gm.fma(fl(p * f32(3)), ul, lo))
        lo = fl(gm.fma(p, u, lo))
        l1 = fl(hi + lo)
        ll = fl(lo - fl(l1 - hi))
        z = fl(l1 * y)
        zl = fl(gm.fma(ll, y, fl(gm.fma(l1, y, -z))))
        n = np.rint(z)
        r = fl(zl + fl(z - n))
        q = _poly((0x391FCB8E, 0x3AAF85ED, 0x3C1D9856, 0x3D6357BB, 0x3E75FDEC, 0x3F317218), r, fl)
        q = fl(gm.fma(q, r, f32(1)))
        low = np.where(n > 0, 0, 0x83000000).astype(np.int64)
        ni = gm.cvt_rzi_s32(n)
        v = fl(fl(q * bits((low + 0x7F000000) & 0xFFFFFFFF)) * bits(((ni << 23) - low) & 0xFFFFFFFF))
        v = np.where(np.abs(z) > 152, np.where(z < 0, f32(0), f32(np.inf)), v)
        # the special cases, the last branch taken first
        w = fl(x + x).view(np.uint32) ^ np.where(y < 0, np.uint32(0x7F800000), np.uint32(0))
        edge = np.where(odd == 1, w, w & np.uint32(0x7FFFFFFF)).view(np.float32)
        negative = np.where(np.floor(y) != y, f32(np.nan), np.where(odd == 1, -v, v))
        out = np.where(x < 0, negative, v)
        out = np.where((x == -1) & (np.abs(y) == np.inf), f32(1), out)
        out = np.where((x == 0) | (ax == np.inf), edge, out)
        out = np.where(np.isnan(x) | np.isnan(y), fl(x + y), out)
    return np.where((x == 1) | (y == 0), f32(1), out)


def model_fast_pow(tables, x, y, ftz):
    """ex2.approx(y * lg2.approx(x)) (.ftz under -ftz=true)."""
    fl = gm.flusher(ftz)
    with np.errstate(invalid="ignore", over="ignore"):
        return gm.ex2_approx(tables, fl(fl(y) * gm.lg2_approx(x, ftz)), ftz)


def model_fast_tan(tables, x, ftz):
    """div.approx(sin.approx(x), cos.approx(x))."""
    return gm.div_approx(tables, gm.sin_approx(x, False), gm.sin_approx(x, True), ftz)


def model(tables, x, y, options):
    """Every row as nvcc compiles it with `options`. Under --use_fast_math powf is __powf's chain
    with .ftz, log2f lg2.approx.ftz and log10f that times log10(2) rounded, and tanf __tanf; without
    it, tanf's row (CUDA's precise tanf, tests/runtime/test_gpu_sincos.py's) is None."""
    ftz = options != NO_FTZ
    fast = options == FAST

    def pow_(a, b):
        a, b = (np.broadcast_to(np.float32(v), x.shape) for v in (a, b))
        return model_fast_pow(tables, a, b, True) if fast else model_pow(tables, a, b, ftz)

    fast_tan = model_fast_tan(tables, x, ftz)
    if fast:
        log2 = gm.lg2_approx(x, True)
        log10 = gm.flush(log2 * bits(0x3E9A209B))
    else:
        log2, log10 = model_log2(x, ftz), model_log10(x, ftz)
    return [pow_(x, y), model_cbrt(tables, x, ftz), log2, log10, model_fast_pow(tables, x, y, ftz), fast_tan,
            fast_tan if fast else None] + [pow_(x if a is None else a, y if b is None else b) for _, a, b in CONSTANT]


# -- the tests ----------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [NO_FTZ, FTZ, FAST], ids=["no-ftz", "ftz", "fast-math"])
def test_bit_for_bit_with_a_numpy_model_of_the_ptx(options, rng, tables):
    """Every row against the model on 100,000 fresh pairs: powf's double-float log2 and its
    exp2, its special cases and its constant exponents, cbrtf's lg2.approx, ex2.approx and
    Newton step, log2f's and log10f's polynomials, __powf's and __tanf's chains of approximate
    instructions; under --use_fast_math powf, log2f, log10f and tanf their fast forms."""
    x, y = inputs(rng)
    out, want = run("named", x, y, options), model(tables, x, y, options)
    for row, name in enumerate(ROWS):
        if want[row] is None:
            continue
        same = same_bits(out[row], want[row])
        assert same.all(), (name, options, x[~same][:4], y[~same][:4], out[row][~same][:4], want[row][~same][:4])


WRONG = r'''
extern "C" __global__ void wrong(float* o, const float* x, const float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], w = y[i], a = fabsf(v);
    o[i] = exp2f(w * log2f(a)) * (v < 0.0f && fmodf(w, 2.0f) != 0.0f ? -1.0f : 1.0f);
    o[n + i] = copysignf(exp2f(log2f(a) * 0.333333343f), v);
    o[2 * n + i] = logf(v) * 1.44269502f;
    o[3 * n + i] = log2f(v) * 0.301029995f;
    o[4 * n + i] = expf(w * __logf(v));
    o[5 * n + i] = __sinf(v) * (1.0f / __cosf(v));
}'''


def test_the_model_catches_a_wrong_step(rng, tables):
    """The model is not blind: the same functions with a step done otherwise differ from it (powf
    without its double-float logarithm, cbrtf without its Newton step, log2f as logf times log2 e,
    log10f as log2f times log10 2, __powf through expf and __logf, __tanf with an IEEE reciprocal)."""
    x, y = inputs(rng, 20000)
    want = model(tables, x, y, NO_FTZ)
    o = np.zeros(6 * x.size, np.float32)
    cudacheck.RawModule(WRONG, backend="cpu", options=NO_FTZ).get_function("wrong")(
        ((x.size + 255) // 256,), (256,), (o, x, y, np.int32(x.size)))
    for row, got in enumerate(o.reshape(6, x.size)):
        finite = np.isfinite(want[row])
        assert not same_bits(got[finite], want[row][finite]).all(), ROWS[row]


def test_within_the_programming_guides_bounds(rng):
    """powf within 4 ulp of float64's pow rounded to float32, cbrtf and log2f within 1, log10f
    within 2, wherever the exact result is a finite float (subnormal results included)."""
    x, y = inputs(rng)
    out = run("named", x, y, NO_FTZ)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        exact = {"powf": np.power(x64, y64), "cbrtf": np.cbrt(x64), "log2f": np.log2(x64), "log10f": np.log10(x64)}
    for name, bound in BOUNDS.items():
        row = ROWS.index(name)
        with np.errstate(over="ignore"):
            defined = np.isfinite(exact[name].astype(np.float32)) & np.isfinite(x) & np.isfinite(y)
        err = ulps(out[row][defined], exact[name][defined])
        worst = np.argmax(err)
        assert err.max() <= bound, (name, x[defined][worst], y[defined][worst], err.max())


def test_special_values():
    """C99's (and CUDA's) special cases: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN,
    pow(-1, +-inf) = 1, pow(+-0, y) = +-inf / +-0 by y's sign and parity, pow of x < 0 and y not an
    integer NaN, pow(-8, 1/3) NaN, pow(2^-70, 2) the subnormal 2^-140; cbrt of +-0 and +-inf
    themselves, cbrt(-8) = -2; log2 and log10 of +-0 -inf, of x < 0 NaN, of +inf +inf, of powers
    of 2 and of 10 exact."""
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    x = np.array([np.nan, 1, -1, -1, 0, -0.0, -0.0, 0, -0.0, -2, -8, np.inf, -np.inf, -np.inf, 8, 1024, 2.0 ** -70],
                 np.float32)
    y = np.array([0, np.nan, np.inf, -np.inf, -1, -1, 3, 2, -2, 0.5, 1 / 3, -1, 3, 2, 2, 0.1, 2], np.float32)
    out = run("named", x, y, NO_FTZ)
    want = [1, 1, 1, 1, inf, -inf, -0.0, 0, inf, nan, nan, 0, -inf, inf, 64, 2, 2.0 ** -140]   # a subnormal, exact
    assert same_bits(out[0], np.array(want, np.float32)).all(), out[0]
    c = run("named", np.array([0, -0.0, np.inf, -np.inf, -8, 27, np.nan], np.float32), np.ones(7, np.float32),
            NO_FTZ)[1]
    assert same_bits(c, np.array([0, -0.0, np.inf, -np.inf, -2, 3, np.nan], np.float32)).all()
    logs = run("named", np.array([0, -0.0, -1, np.inf, 8, 1000, np.nan], np.float32), np.ones(7, np.float32),
               NO_FTZ)[2:4]
    assert list(logs[0][:2]) == [-inf, -inf] and list(logs[1][:2]) == [-inf, -inf]
    assert np.isnan(logs[:, [2, 6]]).all() and (logs[:, 3] == inf).all()
    assert logs[0][4] == 3 and logs[1][5] == 3


@pytest.mark.parametrize("options", [NO_FTZ, FTZ, FAST], ids=["no-ftz", "ftz", "fast-math"])
def test_the_overloads_and_spellings_are_the_same_functions(options, rng):
    """pow, cbrt, log2, log10 and tan of floats, ::pow, ::cbrtf, ::log2, ..., are the
    functions above, with and without -ftz and under --use_fast_math."""
    x, y = inputs(rng, 20000)
    named = run("named", x, y, options)
    for kernel in ("overloads", "qualified"):
        other = run(kernel, x, y, options)
        for row, name in enumerate(ROWS):
            assert same_bits(other[row], named[row]).all(), (kernel, name)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [(), pytest.param(NO_FTZ, marks=gm.CUPY_FORCES_FTZ), FTZ, FAST],
                         ids=["default", "no-ftz", "ftz", "fast-math"])
def test_the_gpu_computes_the_same_bits(options):
    """The GPU's bits on 200,000 fresh pairs, every spelling."""
    rng = np.random.default_rng()
    x, y = inputs(rng, 200000)
    for kernel in SPELLINGS:
        cpu, gpu = run(kernel, x, y, options), run(kernel, x, y, options, "gpu")
        same = same_bits(cpu, gpu)
        bad = [(ROWS[i], x[~same[i]][:4], y[~same[i]][:4]) for i in range(len(ROWS)) if not same[i].all()]
        assert same.all(), (kernel, options, bad)
