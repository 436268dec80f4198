"""CUDA's own sinf, cosf, sincosf and tanf (nvcc's and NVRTC's defaults, no --use_fast_math) as
the CPU runtime computes them (cpu/src/kc_gpu_math.h): within the Programming Guide's error
bounds of the exact values at every magnitude, the special values, sincosf as sinf and cosf,
-ftz=true's flushing, bit for bit against a NumPy model of the PTX of CUDA 13.0 (the reduction
by pi/2, exact past 105615, and the polynomials), and, on a GPU, against the GPU's bits."""
from fractions import Fraction

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath
from tests.support import gpu_float_model as gm

# One kernel per spelling of the four functions (CUDA's names, their float overloads, the fast
# intrinsics): sinf, cosf, sincosf's two results and tanf in five rows.
TRIG = r'''
extern "C" __global__ void NAME(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s, c;
    SINCOS(x[i], &s, &c);
    o[i] = SIN(x[i]); o[n + i] = COS(x[i]); o[2 * n + i] = s; o[3 * n + i] = c; o[4 * n + i] = TAN(x[i]);
}'''
TRIG_SPELLINGS = {"trig": ("sincosf", "sinf", "cosf", "tanf"), "overloads": ("sincos", "sin", "cos", "tan"),
                  "intrinsics": ("__sincosf", "__sinf", "__cosf", "__tanf")}


def _trig(name, sincos, sin, cos, tan):
    # SINCOS first: SIN and COS are inside it
    return TRIG.replace("NAME", name).replace("SINCOS", sincos).replace("SIN", sin).replace("COS", cos) \
        .replace("TAN", tan)


KERNELS = "".join(_trig(name, *spelling) for name, spelling in TRIG_SPELLINGS.items()) + r'''
extern "C" __global__ void exponentials(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    o[i] = exp(x[i]); o[n + i] = __expf(x[i]); o[2 * n + i] = exp2(x[i]); o[3 * n + i] = exp2f(x[i]);
}'''
# The C++ spellings: ::sin (the float overload) and ::sinf name the same functions; a double's
# sincos stays the C library's.
SPELLINGS = r'''
extern "C" __global__ void spelled(float* o, const float* x, double* d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double ds, dc;
    sincos(d[i], &ds, &dc);
    o[i] = ::sin(x[i]); o[n + i] = ::cos(x[i]); o[2 * n + i] = ::sinf(x[i]); o[3 * n + i] = ds;
    o[4 * n + i] = ::tan(x[i]);
}'''
ROWS = ("sinf", "cosf", "sincosf's sine", "sincosf's cosine", "tanf")
NO_FTZ, FTZ = gm.NO_FTZ, ("-ftz=true",)
THRESHOLD = np.uint32(0x47CE4780).view(np.float32)   # 105615: larger arguments are reduced exactly


def inputs(rng, n=20000):
    """Floats of every magnitude and sign (each binade alike, subnormals included), values next
    to multiples of pi/2 (where the reduction cancels most), around 105615 and near FLT_MAX, and
    the special values."""
    e = rng.integers(-150, 128, n)
    m = rng.integers(0, 1 << 23, n, dtype=np.int64)
    signs = rng.integers(0, 2, n, dtype=np.uint32) << 31
    bits = np.where(e < -126, m, ((e + 127) << 23) | m).astype(np.uint32) | signs
    x = bits.view(np.float32)
    k = rng.integers(1, 1 << 22, n // 4) * (2.0 ** rng.integers(0, 40, n // 4))
    near = (k * (np.pi / 2)).astype(np.float32).view(np.int32) + rng.integers(-2, 3, n // 4).astype(np.int32)
    x[: n // 4] = near.view(np.float32)
    x[n // 4: n // 4 + 64] = (THRESHOLD.view(np.int32) + np.arange(-32, 32, dtype=np.int32)).view(np.float32)
    x[n // 4 + 64: n // 4 + 96] = (np.int32(0x7F7FFFFF) - np.arange(32, dtype=np.int32)).view(np.float32)
    x[-12:] = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x80000001,
                        0x007FFFFF, 0x00800000, 0x3FC90FDB, 0x40490FDB, 0xCB800000], np.uint32).view(np.float32)
    return x


def run(kernel, x, options, backend="cpu", source=KERNELS):
    n = x.size
    grid, args = ((n + 255) // 256,), (np.int32(n),)
    if backend == "gpu":
        import cupy
        o = cupy.zeros(5 * n, cupy.float32)
        cudacheck.RawModule(source, backend="gpu", options=options).get_function(kernel)(
            grid, (256,), (o, cupy.asarray(x)) + args)
        return cupy.asnumpy(o).reshape(5, n)
    o = np.zeros(5 * n, np.float32)
    extra = (x.astype(np.float64),) if kernel == "spelled" else ()
    module = cudacheck.RawModule(source, backend="cpu", options=options)
    module.get_function(kernel)(grid, (256,), (o, x) + extra + args)
    return o.reshape(5, n)


def same_bits(a, b):
    """Equal bit patterns, every NaN alike (a GPU's NaN is 0x7FFFFFFF; the processor keeps a payload)."""
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def ulps(got, exact):
    """|got - exact| in units of float32's last place at the exact value (2^-149 below FLT_MIN)."""
    e = np.floor(np.log2(np.maximum(np.abs(exact), 2.0 ** -126)))
    return np.abs(got.astype(np.float64) - exact) / 2.0 ** (e - 23)


# -- a NumPy model of nvcc's PTX for sinf, cosf and tanf (CUDA 13.0, sm_80 and sm_90 alike) --------

def _bits(u):
    return np.uint32(u).view(np.float32)


def _two_over_pi(bits):
    """floor(2/pi * 2^bits), from pi by Machin's formula in integers (with 64 guard bits)."""
    scale = bits + 64

    def arctan_inverse(k):   # atan(1/k) * 2^scale
        total, power, j, k2 = 0, (1 << scale) // k, 0, k * k
        while power:
            total += (-1) ** j * (power // (2 * j + 1))
            power //= k2
            j += 1
        return total
    pi = 16 * arctan_inverse(5) - 4 * arctan_inverse(239)
    return (1 << (bits + 1 + scale)) // pi


TWO_OVER_PI_192 = _two_over_pi(192)
HALF_PI_2_64 = float.fromhex("0x1.921fb54442d19p-64")   # the PTX's double constant 0x3BF921FB54442D19


def _flusher(ftz):
    """What an instruction does to its float32 result: flushed under -ftz=true, else kept."""
    return gm.flush if ftz else (lambda v: np.asarray(v, np.float32))


def model_reduce(x, ftz):
    """(r, q) as the PTX forms them: x = q pi/2 + r."""
    fl = _flusher(ftz)
    x = fl(x)
    with np.errstate(invalid="ignore"):
        t = fl(x * _bits(0x3F22F983))
        q = np.where(np.isnan(t), 0, np.rint(t)).astype(np.int64)
    qf = q.astype(np.float32)
    r = fl(gm.fma(qf, _bits(0xBFC90FDA), x))
    r = fl(gm.fma(qf, _bits(0xB3A22168), r))
    r = fl(gm.fma(qf, _bits(0xA7C234C5), r))
    big = np.abs(x) >= THRESHOLD   # NaN compares false: the first path's
    inf = np.isinf(x)
    with np.errstate(invalid="ignore"):
        r = np.where(inf, x * np.float32(0), r)
    q = np.where(inf, 0, q)
    for i in np.flatnonzero(big & ~inf):
        # x = M 2^(E - 150) with M the 24-bit significand: 64 bits of x 2/pi, the quadrant's two
        # integer bits first, are floor(M T 2^(E - 280)) mod 2^64 for T = floor(2/pi 2^192).
        u = int(x[i:i + 1].view(np.uint32)[0])
        E, M = (u >> 23) & 0xFF, (u & 0x7FFFFF) | 0x800000
        F = (M * TWO_OVER_PI_192 >> (280 - E)) & ((1 << 64) - 1)
        up = (F >> 61) & 1                               # past half a quadrant: the next one's
        frac = (F << 2) & ((1 << 64) - 1)                # the 62 fraction bits, times 4
        d = (1 << 64) - 1 - frac if up else frac         # ones' complement for the next multiple
        v = np.float32(float(d) * HALF_PI_2_64)
        negative = bool(u >> 31) != bool(up)
        r[i] = -v if negative else v
        q[i] = -((F >> 62) + up) if u >> 31 else (F >> 62) + up
    return r, q


def model_sine(r, q, ftz):
    """sin(r + q pi/2) as the PTX computes it: operands selected by q's parity, the product
    r2 * (r or 1) + 0, and -1 * v + 0 for q & 2."""
    fl = _flusher(ftz)
    odd = (q & 1) == 1
    r2 = fl(r * r)
    f7 = np.where(odd, np.float32(1), r)
    a = np.where(odd, fl(gm.fma(_bits(0x37CBAC00), r2, _bits(0xBAB607ED))), _bits(0xB94D4153))
    b = fl(gm.fma(a, r2, np.where(odd, _bits(0x3D2AAABB), _bits(0x3C0885E4))))
    c = fl(gm.fma(b, r2, np.where(odd, _bits(0xBEFFFFFF), _bits(0xBE2AAAA8))))
    v = fl(gm.fma(c, fl(gm.fma(r2, f7, np.float32(0))), f7))
    return np.where((q & 2) != 0, fl(gm.fma(v, np.float32(-1), np.float32(0))), v)


def model_tan(r, q, ftz, tables):
    fl = _flusher(ftz)
    r2 = fl(r * r)
    p = fl(gm.fma(_bits(0x3C190000), r2, _bits(0x3B560000)))
    for c in (0x3CC70000, 0x3D5B0000, 0x3E089438, 0x3EAAAA88):
        p = fl(gm.fma(p, r2, _bits(c)))
    t = fl(gm.fma(p, fl(r2 * r), r))
    t = np.where(np.abs(r) == _bits(0x3A00B43C), r, t)
    with np.errstate(over="ignore", divide="ignore"):
        return np.where((q & 1) == 1, gm.rcp_approx_ftz(tables, -t), t)


@pytest.fixture(scope="module")
def tables():
    import lzma
    blob = lzma.decompress(gpumath.DATA.read_bytes())
    return {"rcp": gpumath.decode("rcp", blob)}


# -- the tests ----------------------------------------------------------------------------------

def test_the_models_fma_rounds_once(rng):
    """The model's fma.rn.f32 against exact rational arithmetic, where rounding the float64 sum
    would round twice: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a float32 midpoint, and +-2^-80
    decides it."""
    a = np.float32(1 + 2.0 ** -12)
    got = gm.fma(a, a, np.array([2.0 ** -80, -(2.0 ** -80), 0.0], np.float32)).astype(np.float64) - (1 + 2.0 ** -11)
    assert list(got) == [2.0 ** -23, 0.0, 0.0]
    # and on fresh operands whose sum nearly cancels the product (the rounding of a*b decides it)
    a, b = (rng.uniform(-4, 4, 400).astype(np.float32) for _ in range(2))
    c = (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-6, 1e-6, 400))).astype(np.float32)
    assert np.array_equal(gm.fma(a, b, c), [_fma_rational(*v) for v in zip(a, b, c)])


def _fma_rational(a, b, c):
    """a * b + c of float32 values, in exact rationals, rounded once to float32 (ties to even)."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    r = np.float32(float(exact))
    lo, hi = (np.nextafter(r, np.float32(-np.inf)), r) if Fraction(float(r)) > exact else \
        (r, np.nextafter(r, np.float32(np.inf)))
    dlo, dhi = exact - Fraction(float(lo)), Fraction(float(hi)) - exact
    return lo if dlo < dhi or (dlo == dhi and not (lo.view(np.uint32) & 1)) else hi


def test_within_the_programming_guides_bounds_at_every_magnitude(rng):
    """sinf, cosf and sincosf within 2 ulp of the exact values, tanf within 4 (the Programming
    Guide's table of single-precision functions: full range), past 105615 and up to FLT_MAX
    as well; NaN for infinities and NaN."""
    x = inputs(rng)
    out = run("trig", x, NO_FTZ)
    x64 = x.astype(np.float64)
    finite = np.isfinite(x)
    with np.errstate(invalid="ignore"):
        exact = np.array([np.sin(x64), np.cos(x64), np.sin(x64), np.cos(x64), np.tan(x64)])
    for row, (name, bound) in enumerate(zip(ROWS, (2, 2, 2, 2, 4))):
        err = ulps(out[row][finite], exact[row][finite])
        assert err.max() <= bound, (name, x[finite][np.argmax(err)], err.max())
        assert np.isnan(out[row][~finite]).all(), name
    big = finite & (np.abs(x) >= THRESHOLD)
    assert big.sum() > 1000   # the exact reduction ran often


def test_special_values():
    """sin(+-0) = +-0, cos(+-0) = 1, tan(+-0) = +-0, a subnormal's sine and tangent itself (no
    -ftz) and its cosine 1; NaN for +-inf and NaN; sinf and tanf odd, cosf even, to the bit."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149, -(2.0 ** -130)], np.float32)
    out = run("trig", x, NO_FTZ)
    for row in (0, 2, 4):
        assert np.array_equal(out[row][[0, 1, 5, 6]].view(np.uint32), x[[0, 1, 5, 6]].view(np.uint32)), ROWS[row]
    for row in (1, 3):
        assert (out[row][[0, 1, 5, 6]] == 1).all(), ROWS[row]
    assert np.isnan(out[:, 2:5]).all()
    rng = np.random.default_rng()
    y = inputs(rng, 4000)
    y = y[~np.isnan(y)]
    pos, neg = run("trig", np.abs(y), NO_FTZ), run("trig", -np.abs(y), NO_FTZ)
    sign = np.uint32(0x80000000)
    for row in range(5):
        want = neg[row].view(np.uint32) ^ (sign if row in (0, 2, 4) else np.uint32(0))
        assert same_bits(pos[row], want.view(np.float32)).all(), ROWS[row]


@pytest.mark.parametrize("options", [NO_FTZ, FTZ], ids=["no-ftz", "ftz"])
def test_sincosf_and_the_overloads_are_sinf_and_cosf(options, rng):
    """sincosf computes both polynomials after one reduction and negates with neg.f32 where sinf
    and cosf use -1 * v + 0: the same bits, as v is never 0 there. sin, cos, sincos and tan of a
    float are sinf, cosf, sincosf and tanf."""
    x = inputs(rng)
    out, over = run("trig", x, options), run("overloads", x, options)
    assert same_bits(out[2], out[0]).all() and same_bits(out[3], out[1]).all()
    for row in range(5):
        assert same_bits(over[row], out[row]).all(), ROWS[row]


def test_the_cpp_spellings_are_the_same_functions(rng):
    """::sin, ::cos, ::tan and ::sinf are rewritten alike; sincos of a double keeps the
    C library's (its own overload)."""
    x = inputs(rng, 4000)
    out, spelled = run("trig", x, NO_FTZ), run("spelled", x, NO_FTZ, source=SPELLINGS)
    for row, want in ((0, 0), (1, 1), (2, 0), (4, 4)):
        assert same_bits(spelled[row], out[want]).all(), row
    finite = np.isfinite(x)
    assert ulps(spelled[3][finite], np.sin(x[finite].astype(np.float64))).max() <= 0.501   # the double's, stored


def test_ftz_flushes_as_the_ptx_does(rng):
    """-ftz=true makes every float instruction .ftz: a subnormal argument is zero of its sign
    (sine and tangent +-0, cosine 1); a normal argument gives the -ftz=false bits, as the
    subnormal intermediates (r^2, r^3 for tiny r) never reach a normal result."""
    x = inputs(rng)
    flushed, kept = run("trig", x, FTZ), run("trig", x, NO_FTZ)
    sub = (x != 0) & (np.abs(x) < gm.FLT_MIN)
    assert sub.sum() > 50
    zero = np.copysign(np.float32(0), x[sub])
    for row in (0, 2, 4):
        assert np.array_equal(flushed[row][sub].view(np.uint32), zero.view(np.uint32)), ROWS[row]
    assert (flushed[[1, 3]][:, sub] == 1).all()
    normal = ~sub
    assert same_bits(flushed[:, normal], kept[:, normal]).all()


@pytest.mark.parametrize("options", [NO_FTZ, FTZ], ids=["no-ftz", "ftz"])
def test_bit_for_bit_with_a_numpy_model_of_the_ptx(options, rng, tables):
    """The runtime's sinf, cosf and tanf against an independent model of nvcc's PTX: the
    reduction (three fused steps below 105615, the exact 2/pi product above it, from pi by
    Machin's formula), the polynomials with fma rounded once, rcp.approx from the table."""
    ftz = options == FTZ
    x = inputs(rng, 6000)
    out = run("trig", x, options)
    r, q = model_reduce(x, ftz)
    for row, want in ((0, model_sine(r, q, ftz)), (1, model_sine(r, q + 1, ftz)), (4, model_tan(r, q, ftz, tables))):
        same = same_bits(out[row], want)
        assert same.all(), (ROWS[row], x[~same][:5], out[row][~same][:5], want[~same][:5])


def test_fast_math_keeps_the_intrinsics(rng):
    """--use_fast_math: sinf, cosf, sincosf, tanf and their float overloads are __sinf, __cosf,
    __sincosf and __tanf, as nvcc compiles them (sin.approx, cos.approx, their quotient), and exp
    and exp2 of a float are __expf and fast math's exp2f (ex2.approx.ftz), as expf and exp2f are."""
    x = inputs(rng, 4000)
    intrinsic = run("intrinsics", x, FTZ)
    for kernel in ("trig", "overloads"):
        fast = run(kernel, x, ("--use_fast_math",))
        for row in range(5):
            assert same_bits(fast[row], intrinsic[row]).all(), (kernel, ROWS[row])
    assert not same_bits(run("trig", x, FTZ)[0], intrinsic[0]).all()
    fast = run("exponentials", x, ("--use_fast_math",))   # exp and exp2 of a float: ex2.approx.ftz too
    assert same_bits(fast[0], fast[1]).all() and same_bits(fast[2], fast[3]).all()
    assert not same_bits(run("exponentials", x, FTZ)[0], fast[0]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("options", [(), pytest.param(NO_FTZ, marks=gm.CUPY_FORCES_FTZ), FTZ, ("--use_fast_math",)],
                         ids=["default", "no-ftz", "ftz", "fast-math"])
def test_the_gpu_computes_the_same_bits(options):
    """The GPU's bits on 200,000 fresh inputs (under --use_fast_math tanf is __tanf: sin.approx by
    cos.approx through div.approx)."""
    x = inputs(np.random.default_rng(), 200000)
    for kernel in ("trig", "overloads"):
        cpu, gpu = run(kernel, x, options), run(kernel, x, options, "gpu")
        same = same_bits(cpu, gpu)
        assert same.all(), (kernel, options,
                            [(ROWS[i], x[~same[i]][:4]) for i in range(same.shape[0]) if not same[i].all()])
