"""CUDA's device intrinsics and math functions on the CPU runtime (cpu/src/kc_intrinsics.h).

Each family of intrinsics is one kernel that writes one output per intrinsic and input (as
64-bit patterns), run on fresh random inputs and the edge cases (0, -0.0, subnormals, inf,
NaN, the integer extremes, rounding ties). The references are computed here and share
nothing with the header: rounding modes by exact rational arithmetic (fractions.Fraction)
rounded in each direction by hand, the math functions in 60-digit decimal arithmetic.

The same kernels ran on an H100 through plain CuPy; logs/2026-11-23-intrinsics-gpu.md has the
comparison, and the GPU's answers on the special cases are the expectations below.
"""
import math
from decimal import Decimal, Overflow, getcontext, localcontext
from fractions import Fraction

import numpy as np
import pytest

import cudacheck
from tests.support.gpu_float_model import LG2_GUIDE_NEAR_ONE, NO_FTZ

# ---- kernels: one output slot per intrinsic, stored as bits ------------------------------------
CTYPES = {"i4": "int", "u4": "unsigned int", "i8": "long long", "u8": "unsigned long long", "f4": "float",
          "f8": "double"}
NPTYPES = {"i4": np.int32, "u4": np.uint32, "i8": np.int64, "u8": np.uint64, "f4": np.float32, "f8": np.float64}
STORE = {"i4": "(unsigned long long)(long long)(int)({})", "u4": "(unsigned long long)(unsigned int)({})",
         "i8": "(unsigned long long)(long long)({})", "u8": "(unsigned long long)({})",
         "f4": "(unsigned long long)__float_as_uint({})", "f8": "(unsigned long long)__double_as_longlong({})"}
MODES = ("rn", "rz", "ru", "rd")


def kernel_source(name, inputs, items, prologue=""):
    """A kernel `name` over the input arrays a, b, c (types `inputs`) that stores, for each
    (key, type, expression) of `items`, the expression's bits in out[i * len(items) + slot]."""
    params = ", ".join(f"const {CTYPES[t]}* in_{v}" for t, v in zip(inputs, "abc"))
    loads = " ".join(f"{CTYPES[t]} {v} = in_{v}[i];" for t, v in zip(inputs, "abc"))
    body = "\n".join(f"    o[{j}] = {STORE[t].format(expr)};" for j, (_, t, expr) in enumerate(items))
    return (f'extern "C" __global__ void {name}({params}, unsigned long long* out, int n) {{\n'
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    {loads}\n"
            f"    unsigned long long* o = out + {len(items)}ll * i;\n{prologue}\n{body}\n}}\n")


def decode(bits, t):
    """Slot values from their 64-bit patterns, as type t."""
    bits = np.asarray(bits, np.uint64)
    if t in ("f4", "u4", "i4"):
        return bits.astype(np.uint32).view(NPTYPES[t])
    return bits.view(NPTYPES[t])


def run_family(name, arrays, check=False, options=()):
    """Runs family `name` on the CPU runtime: {key: output values}."""
    fam = FAMILIES[name]
    src = kernel_source(name, fam["inputs"], fam["items"], fam.get("prologue", ""))
    n = len(arrays[0])
    out = np.zeros(n * len(fam["items"]), np.uint64)
    args = [np.ascontiguousarray(a, NPTYPES[t]) for a, t in zip(arrays, fam["inputs"])]
    kernel = cudacheck.RawKernel(src, name, backend="cpu", check=check, options=options)
    kernel(((n + 127) // 128,), (128,), (*args, out, np.int32(n)))
    out = out.reshape(n, len(fam["items"]))
    return {key: decode(out[:, j], t) for j, (key, t, _) in enumerate(fam["items"])}


M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


# ---- integer intrinsics -------------------------------------------------------------------------
INT_PROLOGUE = """
    unsigned long long AB = ((unsigned long long)a << 32) | b, CA = ((unsigned long long)c << 32) | a;
    unsigned long long BA = ((unsigned long long)b << 32) | a;
    char4 ca = make_char4((signed char)a, (signed char)(a >> 8), (signed char)(a >> 16), (signed char)(a >> 24));
    char4 cb = make_char4((signed char)b, (signed char)(b >> 8), (signed char)(b >> 16), (signed char)(b >> 24));
    uchar4 ua = make_uchar4((unsigned char)a, (unsigned char)(a >> 8), (unsigned char)(a >> 16),
                            (unsigned char)(a >> 24));
    uchar4 ub = make_uchar4((unsigned char)b, (unsigned char)(b >> 8), (unsigned char)(b >> 16),
                            (unsigned char)(b >> 24));
    short2 sa = make_short2((short)a, (short)(a >> 16));
    ushort2 usa = make_ushort2((unsigned short)a, (unsigned short)(a >> 16));
    unsigned int sh = c >> 25;"""


def _fns(mask, base, offset):
    """PTX fns, as the PTX ISA's pseudocode states it."""
    if offset == 0:
        return base if (mask >> base) & 1 else M32
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return M32


def _bytes(v, n):
    return [(v >> 8 * k) & 0xFF for k in range(n)]


def _dp4a(a, b, c, signed):
    conv = (lambda v: v - 256 if v > 127 else v) if signed else (lambda v: v)
    return c + sum(conv(x) * conv(y) for x, y in zip(_bytes(a, 4), _bytes(b, 4)))


def _dp2a(a, b, c, signed, hi):
    h = [(a & 0xFFFF), a >> 16]
    bb = _bytes(b, 4)[2:] if hi else _bytes(b, 4)[:2]
    if signed:
        h = [v - 65536 if v > 32767 else v for v in h]
        bb = [v - 256 if v > 127 else v for v in bb]
    return c + h[0] * bb[0] + h[1] * bb[1]


def _funnel(lo, hi, shift, left, clamp):
    s = min(shift, 32) if clamp else shift & 31
    v = (hi << 32) | lo
    return ((v << s) >> 32) & M32 if left else (v >> s) & M32


INT_ITEMS = [
    ("popc", "i4", "__popc(a)", lambda a, b, c: bin(a).count("1")),
    ("popcll", "i4", "__popcll(AB)", lambda a, b, c: bin((a << 32) | b).count("1")),
    ("clz", "i4", "__clz((int)a)", lambda a, b, c: 32 - a.bit_length()),
    ("clzll", "i4", "__clzll((long long)AB)", lambda a, b, c: 64 - ((a << 32) | b).bit_length()),
    ("ffs", "i4", "__ffs((int)a)", lambda a, b, c: (a & -a).bit_length()),
    ("ffsll", "i4", "__ffsll((long long)BA)", lambda a, b, c: (((b << 32) | a) & -((b << 32) | a)).bit_length()),
    ("brev", "u4", "__brev(a)", lambda a, b, c: int(f"{a:032b}"[::-1], 2)),
    ("brevll", "u8", "__brevll(AB)", lambda a, b, c: int(f"{(a << 32) | b:064b}"[::-1], 2)),
    ("byte_perm", "u4", "__byte_perm(a, b, c)",
     lambda a, b, c: sum(_bytes((b << 32) | a, 8)[(c >> 4 * k) & 7] << 8 * k for k in range(4))),
    ("fns", "u4", "__fns(a, b & 31u, (int)(c % 67u) - 33)", lambda a, b, c: _fns(a, b & 31, c % 67 - 33)),
    ("mul24", "i4", "__mul24((int)a, (int)b)",
     lambda a, b, c: s32((((a & 0xFFFFFF) ^ 0x800000) - 0x800000) * (((b & 0xFFFFFF) ^ 0x800000) - 0x800000))),
    ("umul24", "u4", "__umul24(a, b)", lambda a, b, c: ((a & 0xFFFFFF) * (b & 0xFFFFFF)) & M32),
    ("mulhi", "i4", "__mulhi((int)a, (int)b)", lambda a, b, c: (s32(a) * s32(b)) >> 32),
    ("umulhi", "u4", "__umulhi(a, b)", lambda a, b, c: (a * b) >> 32),
    ("mul64hi", "i8", "__mul64hi((long long)AB, (long long)CA)",
     lambda a, b, c: (s64((a << 32) | b) * s64((c << 32) | a)) >> 64),
    ("umul64hi", "u8", "__umul64hi(AB, CA)", lambda a, b, c: (((a << 32) | b) * ((c << 32) | a)) >> 64),
    ("sad", "u4", "__sad((int)a, (int)b, c)", lambda a, b, c: (abs(s32(a) - s32(b)) + c) & M32),
    ("usad", "u4", "__usad(a, b, c)", lambda a, b, c: (abs(a - b) + c) & M32),
    ("hadd", "i4", "__hadd((int)a, (int)b)", lambda a, b, c: (s32(a) + s32(b)) >> 1),
    ("rhadd", "i4", "__rhadd((int)a, (int)b)", lambda a, b, c: (s32(a) + s32(b) + 1) >> 1),
    ("uhadd", "u4", "__uhadd(a, b)", lambda a, b, c: (a + b) >> 1),
    ("urhadd", "u4", "__urhadd(a, b)", lambda a, b, c: (a + b + 1) >> 1),
    ("funnelshift_l", "u4", "__funnelshift_l(a, b, sh)", lambda a, b, c: _funnel(a, b, c >> 25, True, False)),
    ("funnelshift_lc", "u4", "__funnelshift_lc(a, b, sh)", lambda a, b, c: _funnel(a, b, c >> 25, True, True)),
    ("funnelshift_r", "u4", "__funnelshift_r(a, b, sh)", lambda a, b, c: _funnel(a, b, c >> 25, False, False)),
    ("funnelshift_rc", "u4", "__funnelshift_rc(a, b, sh)", lambda a, b, c: _funnel(a, b, c >> 25, False, True)),
    ("dp4a", "i4", "__dp4a((int)a, (int)b, (int)c)", lambda a, b, c: s32(_dp4a(a, b, s32(c), True))),
    ("dp4a_u", "u4", "__dp4a(a, b, c)", lambda a, b, c: _dp4a(a, b, c, False) & M32),
    ("dp2a_lo", "i4", "__dp2a_lo((int)a, (int)b, (int)c)", lambda a, b, c: s32(_dp2a(a, b, s32(c), True, False))),
    ("dp2a_hi", "i4", "__dp2a_hi((int)a, (int)b, (int)c)", lambda a, b, c: s32(_dp2a(a, b, s32(c), True, True))),
    ("dp2a_lo_u", "u4", "__dp2a_lo(a, b, c)", lambda a, b, c: _dp2a(a, b, c, False, False) & M32),
    ("dp2a_hi_u", "u4", "__dp2a_hi(a, b, c)", lambda a, b, c: _dp2a(a, b, c, False, True) & M32),
    ("dp4a_char4", "i4", "__dp4a(ca, cb, (int)c)", lambda a, b, c: s32(_dp4a(a, b, s32(c), True))),
    ("dp4a_uchar4", "u4", "__dp4a(ua, ub, c)", lambda a, b, c: _dp4a(a, b, c, False) & M32),
    ("dp2a_lo_short2", "i4", "__dp2a_lo(sa, cb, (int)c)", lambda a, b, c: s32(_dp2a(a, b, s32(c), True, False))),
    ("dp2a_hi_ushort2", "u4", "__dp2a_hi(usa, ub, c)", lambda a, b, c: _dp2a(a, b, c, False, True) & M32),
    ("umin", "u4", "umin(a, b)", lambda a, b, c: min(a, b)),
    ("umax", "u4", "umax(a, b)", lambda a, b, c: max(a, b)),
    ("llmin", "i8", "llmin((long long)AB, (long long)CA)", lambda a, b, c: min(s64((a << 32) | b), s64((c << 32) | a))),
    ("llmax", "i8", "llmax((long long)AB, (long long)CA)", lambda a, b, c: max(s64((a << 32) | b), s64((c << 32) | a))),
    ("ullmin", "u8", "ullmin(AB, CA)", lambda a, b, c: min((a << 32) | b, (c << 32) | a)),
    ("ullmax", "u8", "ullmax(AB, CA)", lambda a, b, c: max((a << 32) | b, (c << 32) | a)),
    ("min_int_uint", "u4", "min((int)a, b)", lambda a, b, c: min(a, b)),     # compared as unsigned
    ("max_uint_int", "u4", "max(a, (int)b)", lambda a, b, c: max(a, b)),
    ("min_int", "i4", "min((int)a, (int)b)", lambda a, b, c: min(s32(a), s32(b))),
    ("max_int", "i4", "max((int)a, (int)b)", lambda a, b, c: max(s32(a), s32(b))),
    ("min_long", "i8", "min((long)AB, (long)CA)", lambda a, b, c: min(s64((a << 32) | b), s64((c << 32) | a))),
    ("max_ll_ull", "u8", "max((long long)AB, CA)", lambda a, b, c: max((a << 32) | b, (c << 32) | a)),
    ("min_ul_l", "u8", "min((unsigned long)AB, (long)CA)", lambda a, b, c: min((a << 32) | b, (c << 32) | a)),
]

# ---- SIMD intrinsics: per halfword (2) or per byte (4) ------------------------------------------
def _lanes(v, w, signed):
    out = [(v >> (w * k)) & ((1 << w) - 1) for k in range(32 // w)]
    return [x - (1 << w) if signed and x >> (w - 1) else x for x in out]


def _sat(v, w, signed):
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return min(max(v, lo), hi)


def _simd(op, signed, sat=False):
    def f(a, b, w):
        r = 0
        for k, (x, y) in enumerate(zip(_lanes(a, w, signed), _lanes(b, w, signed))):
            v = op(x, y, w)
            r |= ((_sat(v, w, signed) if sat else v) & ((1 << w) - 1)) << (w * k)
        return r
    return f


SIMD_OPS = {  # name: (reference over lanes, unary)
    "vabs": (_simd(lambda x, y, w: abs(x), True), True),
    "vabsss": (_simd(lambda x, y, w: abs(x), True, sat=True), True),
    "vneg": (_simd(lambda x, y, w: -x, False), True),
    "vnegss": (_simd(lambda x, y, w: -x, True, sat=True), True),
    "vabsdiffs": (_simd(lambda x, y, w: abs(x - y), True), False),
    "vabsdiffu": (_simd(lambda x, y, w: abs(x - y), False), False),
    "vadd": (_simd(lambda x, y, w: x + y, False), False),
    "vaddss": (_simd(lambda x, y, w: x + y, True, sat=True), False),
    "vaddus": (_simd(lambda x, y, w: x + y, False, sat=True), False),
    "vsub": (_simd(lambda x, y, w: x - y, False), False),
    "vsubss": (_simd(lambda x, y, w: x - y, True, sat=True), False),
    "vsubus": (_simd(lambda x, y, w: x - y, False, sat=True), False),
    "vavgs": (_simd(lambda x, y, w: (x + y + (x + y >= 0)) >> 1, True), False),   # halves away from zero
    "vavgu": (_simd(lambda x, y, w: (x + y + 1) >> 1, False), False),
    "vhaddu": (_simd(lambda x, y, w: (x + y) >> 1, False), False),
    "vmaxs": (_simd(lambda x, y, w: max(x, y), True), False),
    "vmaxu": (_simd(lambda x, y, w: max(x, y), False), False),
    "vmins": (_simd(lambda x, y, w: min(x, y), True), False),
    "vminu": (_simd(lambda x, y, w: min(x, y), False), False),
    "vsads": (lambda a, b, w: sum(abs(x - y) for x, y in zip(_lanes(a, w, True), _lanes(b, w, True))), False),
    "vsadu": (lambda a, b, w: sum(abs(x - y) for x, y in zip(_lanes(a, w, False), _lanes(b, w, False))), False),
}
for _cmp, _f in (("eq", lambda x, y: x == y), ("ne", lambda x, y: x != y), ("ges", lambda x, y: x >= y),
                 ("geu", lambda x, y: x >= y), ("gts", lambda x, y: x > y), ("gtu", lambda x, y: x > y),
                 ("les", lambda x, y: x <= y), ("leu", lambda x, y: x <= y), ("lts", lambda x, y: x < y),
                 ("ltu", lambda x, y: x < y)):
    _signed = _cmp.endswith("s")
    SIMD_OPS["vcmp" + _cmp] = (_simd(lambda x, y, w, f=_f: -1 if f(x, y) else 0, _signed), False)
    SIMD_OPS["vset" + _cmp] = (_simd(lambda x, y, w, f=_f: 1 if f(x, y) else 0, _signed), False)
SIMD_ITEMS = [(f"{op}{w}", "u4", f"__{op}{w}(a)" if unary else f"__{op}{w}(a, b)")
              for op, (_, unary) in SIMD_OPS.items() for w in (2, 4)]

# ---- exact rounding of rationals to float and double ---------------------------------------------
F32 = dict(bits=24, emin=-126, emax=127, np=np.float32)
F32_UNBOUNDED = dict(bits=24, emin=-10 ** 6, emax=127, np=np.float32)   # 24 bits, no least exponent
F64 = dict(bits=53, emin=-1022, emax=1023, np=np.float64)


FLT_MIN = 2.0 ** -126


def ftz(x):
    """A float subnormal to zero of its sign: CuPy compiles with -ftz=true, the header's default."""
    return math.copysign(0.0, x) if abs(x) < FLT_MIN else x


def round_fraction(q, fmt, mode):
    """The rational q rounded to format fmt in direction mode (rn ties to even), as a float."""
    if q == 0:
        return 0.0
    sign, a = (-1, -q) if q < 0 else (1, q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, fmt["emin"]) - fmt["bits"] + 1)
    m = a / quantum
    fl = m.numerator // m.denominator
    rem = m - fl
    if mode == "rn":
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1)
    else:
        up = rem > 0 and {"rz": False, "ru": sign > 0, "rd": sign < 0}[mode]
    value = (fl + up) * quantum
    if value >= Fraction(2) ** (fmt["emax"] + 1):   # overflow
        if mode == "rn" or (mode == "ru" and sign > 0) or (mode == "rd" and sign < 0):
            return sign * math.inf
        value = (Fraction(2) ** fmt["bits"] - 1) * Fraction(2) ** (fmt["emax"] - fmt["bits"] + 1)
    return math.copysign(float(value), sign)


def nextf(x, fmt, up=True):
    if fmt is F32:
        return float(np.nextafter(np.float32(x), np.float32(math.inf if up else -math.inf)))
    return math.nextafter(x, math.inf if up else -math.inf)


def _zero_sum(x, y, mode):
    """The sign of an exactly zero sum x + y (IEEE 754: -0 only rounding down, or -0 + -0)."""
    if x == 0 and y == 0 and math.copysign(1, x) == math.copysign(1, y):
        return x
    return -0.0 if mode == "rd" else 0.0


def ref_add(x, y, fmt, mode):
    if math.isnan(x) or math.isnan(y) or (math.isinf(x) and math.isinf(y) and x != y):
        return math.nan
    if math.isinf(x) or math.isinf(y):
        return x if math.isinf(x) else y
    q = Fraction(x) + Fraction(y)
    return _zero_sum(x, y, mode) if q == 0 else round_fraction(q, fmt, mode)


def ref_mul(x, y, fmt, mode):
    if math.isnan(x) or math.isnan(y) or (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0):
        return math.nan
    sign = math.copysign(1, x) * math.copysign(1, y)
    if math.isinf(x) or math.isinf(y):
        return sign * math.inf
    q = Fraction(x) * Fraction(y)
    return math.copysign(0.0, sign) if q == 0 else round_fraction(q, fmt, mode)


def ref_div(x, y, fmt, mode):
    if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (math.isinf(x) and math.isinf(y)):
        return math.nan
    sign = math.copysign(1, x) * math.copysign(1, y)
    if math.isinf(x) or y == 0:
        return sign * math.inf
    if math.isinf(y) or x == 0:
        return math.copysign(0.0, sign)
    return round_fraction(Fraction(x) / Fraction(y), fmt, mode)


def ref_fma(x, y, z, fmt, mode):
    if math.isnan(x) or math.isnan(y) or math.isnan(z) or (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0):
        return math.nan
    sp = math.copysign(1, x) * math.copysign(1, y)
    if math.isinf(x) or math.isinf(y):
        return math.nan if math.isinf(z) and math.copysign(1, z) != sp else sp * math.inf
    if math.isinf(z):
        return z
    p = Fraction(x) * Fraction(y)
    q = p + Fraction(z)
    if q == 0:
        return _zero_sum(math.copysign(0.0, sp) if p == 0 else sp, math.copysign(0.0, z) if z == 0 else z, mode) \
            if p == 0 and z == 0 else (-0.0 if mode == "rd" else 0.0)
    return round_fraction(q, fmt, mode)


def _root_bracket(q, fmt, root):
    """The format's neighbours lo <= q^(1/2) < hi (root=2) or lo <= q^(-1/2) < hi (root=-2), for q > 0,
    and whether lo is exact. Decided by squaring: no rounding involved."""
    with localcontext() as ctx:
        ctx.prec = 80
        r = (Decimal(q.numerator) / Decimal(q.denominator)).sqrt()
        if root < 0:
            r = 1 / r
    lo = round_fraction(Fraction(r), fmt, "rd")
    below = (lambda v: Fraction(v) ** 2 <= q) if root > 0 else (lambda v: Fraction(v) ** 2 * q <= 1)
    while not below(lo):
        lo = nextf(lo, fmt, up=False)
    while below(nextf(lo, fmt)):
        lo = nextf(lo, fmt)
    exact = Fraction(lo) ** 2 == q if root > 0 else Fraction(lo) ** 2 * q == 1
    return lo, nextf(lo, fmt), exact


def ref_sqrt(x, fmt, mode):
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0 or math.isinf(x):
        return x
    q = Fraction(x)
    lo, hi, exact = _root_bracket(q, fmt, 2)
    if exact or mode in ("rz", "rd"):
        return lo
    if mode == "ru":
        return hi
    mid = (Fraction(lo) + Fraction(hi)) / 2
    return hi if mid * mid < q else lo   # never a tie: a midpoint squared is not a float


def ref_rsqrt_rn(x, fmt):
    if math.isnan(x) or (x < 0):
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    if math.isinf(x):
        return 0.0
    q = Fraction(x)
    lo, hi, exact = _root_bracket(q, fmt, -2)
    if exact:
        return lo
    mid = (Fraction(lo) + Fraction(hi)) / 2
    return hi if mid * mid * q < 1 else lo


def ref_to_int(x, mode, bits, signed, double=False):
    """A GPU's cvt.rni/rzi/rpi/rmi from float or double to an integer: saturating; NaN gives 0
    from a float to 32 bits, else the pattern 0x80...0 (as an H100 gives)."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isnan(x):
        return 0 if bits == 32 and not double else (lo if signed else 1 << (bits - 1))
    if math.isinf(x):
        return hi if x > 0 else lo
    q = Fraction(x)
    r = {"rn": round(q), "rz": math.trunc(q), "ru": math.ceil(q), "rd": math.floor(q)}[mode]
    return min(max(r, lo), hi)


# ---- conversion and arithmetic families -----------------------------------------------------------
INT_TYPES = (("int", 32, True, "i4"), ("uint", 32, False, "u4"), ("ll", 64, True, "i8"), ("ull", 64, False, "u8"))
F2I_ITEMS = [(f"float2{t}_{m}", ty, f"__float2{t}_{m}(a)", (m, bits, signed))
             for t, bits, signed, ty in INT_TYPES for m in MODES]
F2I_ITEMS += [("float_as_int", "i4", "__float_as_int(a)", None), ("float_as_uint", "u4", "__float_as_uint(a)", None),
              ("int_as_float", "f4", "__int_as_float(__float_as_int(a) ^ (int)0x80000000)", None),
              ("uint_as_float", "f4", "__uint_as_float(__float_as_uint(a))", None)]
D2I_ITEMS = [(f"double2{t}_{m}", ty, f"__double2{t}_{m}(a)", (m, bits, signed))
             for t, bits, signed, ty in INT_TYPES for m in MODES]
D2I_ITEMS += [(f"double2float_{m}", "f4", f"__double2float_{m}(a)", m) for m in MODES]
D2I_ITEMS += [("double2hiint", "i4", "__double2hiint(a)", None), ("double2loint", "i4", "__double2loint(a)", None),
              ("hiloint2double", "f8", "__hiloint2double(__double2hiint(a), __double2loint(a))", None),
              ("double_as_longlong", "i8", "__double_as_longlong(a)", None),
              ("longlong_as_double", "f8", "__longlong_as_double(__double_as_longlong(a) ^ (long long)1)", None)]
I2F_ITEMS = []
for _m in MODES:
    I2F_ITEMS += [(f"int2float_{_m}", "f4", f"__int2float_{_m}(a)", ("a", True, F32, _m)),
                  (f"uint2float_{_m}", "f4", f"__uint2float_{_m}((unsigned int)a)", ("a", False, F32, _m)),
                  (f"ll2float_{_m}", "f4", f"__ll2float_{_m}(b)", ("b", True, F32, _m)),
                  (f"ull2float_{_m}", "f4", f"__ull2float_{_m}((unsigned long long)b)", ("b", False, F32, _m)),
                  (f"ll2double_{_m}", "f8", f"__ll2double_{_m}(b)", ("b", True, F64, _m)),
                  (f"ull2double_{_m}", "f8", f"__ull2double_{_m}((unsigned long long)b)", ("b", False, F64, _m))]
I2F_ITEMS += [("int2double_rn", "f8", "__int2double_rn(a)", ("a", True, F64, "rn")),
              ("uint2double_rn", "f8", "__uint2double_rn((unsigned int)a)", ("a", False, F64, "rn"))]

FARITH_ITEMS, DARITH_ITEMS = [], []
for _m in MODES:
    FARITH_ITEMS += [(f"fadd_{_m}", "f4", f"__fadd_{_m}(a, b)", ("add", _m)),
                     (f"fsub_{_m}", "f4", f"__fsub_{_m}(a, b)", ("sub", _m)),
                     (f"fmul_{_m}", "f4", f"__fmul_{_m}(a, b)", ("mul", _m)),
                     (f"fdiv_{_m}", "f4", f"__fdiv_{_m}(a, b)", ("div", _m)),
                     (f"fmaf_{_m}", "f4", f"__fmaf_{_m}(a, b, c)", ("fma", _m)),
                     (f"fmaf_ieee_{_m}", "f4", f"__fmaf_ieee_{_m}(a, b, c)", ("fma", "ieee_" + _m)),
                     (f"frcp_{_m}", "f4", f"__frcp_{_m}(a)", ("rcp", _m)),
                     (f"fsqrt_{_m}", "f4", f"__fsqrt_{_m}(a)", ("sqrt", _m))]
    DARITH_ITEMS += [(f"dadd_{_m}", "f8", f"__dadd_{_m}(a, b)", ("add", _m)),
                     (f"dsub_{_m}", "f8", f"__dsub_{_m}(a, b)", ("sub", _m)),
                     (f"dmul_{_m}", "f8", f"__dmul_{_m}(a, b)", ("mul", _m)),
                     (f"ddiv_{_m}", "f8", f"__ddiv_{_m}(a, b)", ("div", _m)),
                     (f"fma_{_m}", "f8", f"__fma_{_m}(a, b, c)", ("fma", _m)),
                     (f"drcp_{_m}", "f8", f"__drcp_{_m}(a)", ("rcp", _m)),
                     (f"dsqrt_{_m}", "f8", f"__dsqrt_{_m}(a)", ("sqrt", _m))]
FARITH_ITEMS += [("frsqrt_rn", "f4", "__frsqrt_rn(a)", ("rsqrt", "rn")),
                 ("fdividef", "f4", "fdividef(a, b)", ("div", "rn"))]


def ref_arith(op, mode, fmt, x, y, z, flush=False):
    """The IEEE result; with flush (float, -ftz=true), of the flushed operands, flushed."""
    if flush and fmt is F32:
        if op == "fma" and not mode.startswith("ieee"):
            x, y, z = ftz(x), ftz(y), ftz(z)
        if op != "fma":
            x, y, z = ftz(x), ftz(y), ftz(z)
        base = mode[5:] if mode.startswith("ieee") else mode
        r = ref_arith(op, base, fmt, x, y, z)
        if mode.startswith("ieee") or r == 0 or not math.isfinite(r) or op in ("sqrt", "rsqrt"):
            return r   # (a square root is never tiny)
        # tiny after rounding (as a GPU decides): the exact value rounded to 24 bits with no
        # exponent limit is below FLT_MIN
        return math.copysign(0.0, r) if abs(ref_arith(op, base, F32_UNBOUNDED, x, y, z)) < FLT_MIN else r
    mode = mode[5:] if mode.startswith("ieee") else mode
    if op == "add":
        return ref_add(x, y, fmt, mode)
    if op == "sub":
        return ref_add(x, -y, fmt, mode)
    if op == "mul":
        return ref_mul(x, y, fmt, mode)
    if op == "div":
        return ref_div(x, y, fmt, mode)
    if op == "rcp":
        return ref_div(1.0, x, fmt, mode)
    if op == "fma":
        return ref_fma(x, y, z, fmt, mode)
    if op == "sqrt":
        return ref_sqrt(x, fmt, mode)
    return ref_rsqrt_rn(x, fmt)


# ---- fast-math intrinsics: the C library's values, a GPU's special cases ------------------------------
FAST_ITEMS = [("expf", "f4", "__expf(a)"), ("exp10f", "f4", "__exp10f(a)"), ("logf", "f4", "__logf(a)"),
              ("log2f", "f4", "__log2f(a)"), ("log10f", "f4", "__log10f(a)"), ("sinf", "f4", "__sinf(a)"),
              ("cosf", "f4", "__cosf(a)"), ("tanf", "f4", "__tanf(a)"), ("sincosf_s", "f4", "s_"),
              ("sincosf_c", "f4", "c_"), ("powf", "f4", "__powf(a, b)"), ("fdividef_fast", "f4", "__fdividef(a, b)"),
              ("saturatef", "f4", "__saturatef(a)")]
FAST_PROLOGUE = "    float s_, c_; __sincosf(a, &s_, &c_);"

# ---- math functions ---------------------------------------------------------------------------------
MATHF_ITEMS = [("rsqrt", "f4", "rsqrtf(a)"), ("rcbrt", "f4", "rcbrtf(a)"), ("sinpi", "f4", "sinpif(a)"),
               ("cospi", "f4", "cospif(a)"), ("sincospi_s", "f4", "s_"), ("sincospi_c", "f4", "c_"),
               ("normcdf", "f4", "normcdff(a)"), ("normcdfinv", "f4", "normcdfinvf(0.5f * c)"),
               ("erfinv", "f4", "erfinvf(b)"), ("erfcinv", "f4", "erfcinvf(c)"), ("erfcx", "f4", "erfcxf(a)"),
               ("rhypot", "f4", "rhypotf(a, b)"), ("norm3d", "f4", "norm3df(a, b, c)"),
               ("rnorm3d", "f4", "rnorm3df(a, b, c)"), ("norm4d", "f4", "norm4df(a, b, c, b)"),
               ("rnorm4d", "f4", "rnorm4df(a, b, c, b)"), ("norm", "f4", "normf(3, v_)"),
               ("rnorm", "f4", "rnormf(3, v_)"), ("bessel_i0", "f4", "cyl_bessel_i0f(a)"),
               ("bessel_i1", "f4", "cyl_bessel_i1f(a)"), ("exp10", "f4", "exp10f(a)"),
               # CUDA's float overloads of the same functions: the same values
               ("ovl_rsqrt", "f4", "rsqrt(a)"), ("ovl_sinpi", "f4", "sinpi(a)"), ("ovl_erfinv", "f4", "erfinv(b)"),
               ("ovl_normcdf", "f4", "normcdf(a)"), ("ovl_erfcx", "f4", "erfcx(a)"),
               ("ovl_bessel_i1", "f4", "cyl_bessel_i1(a)")]
MATHF_PROLOGUE = "    float s_, c_; sincospif(a, &s_, &c_); float v_[3] = {a, b, c};"
MATHD_ITEMS = [("rsqrt", "f8", "rsqrt(a)"), ("rcbrt", "f8", "rcbrt(a)"), ("sinpi", "f8", "sinpi(a)"),
               ("cospi", "f8", "cospi(a)"), ("sincospi_s", "f8", "s_"), ("sincospi_c", "f8", "c_"),
               ("normcdf", "f8", "normcdf(a)"), ("normcdfinv", "f8", "normcdfinv(0.5 * c)"),
               ("erfinv", "f8", "erfinv(b)"), ("erfcinv", "f8", "erfcinv(c)"), ("erfcx", "f8", "erfcx(a)"),
               ("rhypot", "f8", "rhypot(a, b)"), ("norm3d", "f8", "norm3d(a, b, c)"),
               ("rnorm3d", "f8", "rnorm3d(a, b, c)"), ("norm4d", "f8", "norm4d(a, b, c, b)"),
               ("rnorm4d", "f8", "rnorm4d(a, b, c, b)"), ("norm", "f8", "norm(3, v_)"), ("rnorm", "f8", "rnorm(3, v_)"),
               ("bessel_i0", "f8", "cyl_bessel_i0(a)"), ("bessel_i1", "f8", "cyl_bessel_i1(a)")]
MATHD_PROLOGUE = "    double s_, c_; sincospi(a, &s_, &c_); double v_[3] = {a, b, c};"

# min and max of floats: CUDA's are fminf and fmin (a NaN argument gives the other one).
MINMAX_ITEMS = [("min_ff", "f4", "min(a, b)"), ("max_ff", "f4", "max(a, b)"), ("min_fd", "f8", "min(a, c)"),
                ("max_df", "f8", "max(c, a)"), ("min_dd", "f8", "min((double)b, c)"),
                ("max_dd", "f8", "max(c, (double)b)")]

FAMILIES = {
    "ints": dict(inputs=("u4", "u4", "u4"), items=[i[:3] for i in INT_ITEMS], prologue=INT_PROLOGUE),
    "simd": dict(inputs=("u4", "u4"), items=SIMD_ITEMS),
    "f2i": dict(inputs=("f4",), items=[i[:3] for i in F2I_ITEMS]),
    "d2i": dict(inputs=("f8",), items=[i[:3] for i in D2I_ITEMS]),
    "i2f": dict(inputs=("i4", "i8"), items=[i[:3] for i in I2F_ITEMS]),
    "farith": dict(inputs=("f4", "f4", "f4"), items=[i[:3] for i in FARITH_ITEMS]),
    "darith": dict(inputs=("f8", "f8", "f8"), items=[i[:3] for i in DARITH_ITEMS]),
    "fast": dict(inputs=("f4", "f4"), items=FAST_ITEMS, prologue=FAST_PROLOGUE),
    "mathf": dict(inputs=("f4", "f4", "f4"), items=MATHF_ITEMS, prologue=MATHF_PROLOGUE),
    "mathd": dict(inputs=("f8", "f8", "f8"), items=MATHD_ITEMS, prologue=MATHD_PROLOGUE),
    "minmax": dict(inputs=("f4", "f4", "f8"), items=MINMAX_ITEMS),
}


# ---- inputs ------------------------------------------------------------------------------------------
def random_floats(rng, n, fmt):
    """Floats of every exponent, sign and class: random bit patterns."""
    if fmt is F32:
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return rng.integers(0, M64, n, dtype=np.uint64, endpoint=True).view(np.float64)


def wide(rng, n, fmt):
    """Signed magnitudes spread over the whole exponent range, and over [-8, 8]."""
    big = 38 if fmt is F32 else 307
    small = -45 if fmt is F32 else -323
    mags = 10.0 ** rng.uniform(small, big, n // 2)
    sign = np.where(rng.random(n // 2) < 0.5, -1.0, 1.0)
    return np.concatenate([mags * sign, rng.uniform(-8, 8, n - n // 2)]).astype(fmt["np"])


def edge_floats(fmt):
    t = fmt["np"]
    fi = np.finfo(t)
    tiny = float(fi.smallest_subnormal)
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 2.0, -2.0,
            tiny, -tiny, 3 * tiny, float(fi.tiny), -float(fi.tiny), float(fi.max), -float(fi.max), 1e-30, -7.25,
            2.0 ** 31, 2.0 ** 31 - 128, -2.0 ** 31, -2.0 ** 31 - 256, 2.0 ** 32, 2.0 ** 32 - 256, 2.0 ** 63,
            -2.0 ** 63, 2.0 ** 64, 2.0 ** 63 - 2 ** 40, 4294967295.5 if fmt is F64 else 1e10, -0.3, -0.7,
            16777217.0, 8388609.5 if fmt is F64 else 8388607.5, 0.25, 0.75, 1e20, -1e20, 33.0, 1.0 / 3]
    return np.array(vals, dtype=t)


def family_inputs(name, rng, n=320):
    """Random inputs and edge cases for family `name`: a list of arrays."""
    if name in ("ints", "simd"):
        edges32 = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x80808080, 0x7F7F7F7F, 0xFFFF0000, 0x0000FFFF,
                   0x80007FFF, 0x7FFF8000, 0x01FF80FF, 0x12345678]
        k = len(edges32)
        cols = [np.concatenate([rng.integers(0, 1 << 32, n, dtype=np.uint64), edges32,
                                np.roll(edges32, j + 1)]).astype(np.uint32) for j in range(3)]
        if name == "ints":   # shifts and fns offsets over their whole range, zero halves for clz/ffs
            cols[0][n:n + k] = edges32
            cols[1][n + k:] = 0
        return cols if name == "ints" else cols[:2]
    if name == "f2i":
        return [np.concatenate([edge_floats(F32), random_floats(rng, n // 2, F32), wide(rng, n // 2, F32),
                                (rng.integers(-2 ** 24, 2 ** 24, 64) + 0.5).astype(np.float32)])]
    if name == "d2i":
        straddle = [float(np.float32(v)) + s * 2.0 ** -40 for v in (1.0, 1.5, 3e38) for s in (-1, 1)]
        mids = [(float(np.float32(v)) + float(np.nextafter(np.float32(v), np.float32(np.inf)))) / 2
                for v in rng.uniform(-1e3, 1e3, 16)]
        return [np.concatenate([edge_floats(F64), random_floats(rng, n // 2, F64), wide(rng, n // 2, F64),
                                rng.integers(-2 ** 52, 2 ** 52, 64) + 0.5, straddle, mids,
                                [3.5e38, -3.5e38, 1e-46, -1e-46, 1e-40, 6e-39],
                                [s * FLT_MIN * (1 - 2.0 ** -k) for k in (24, 25, 26, 30, 40) for s in (1, -1)]])]
    if name == "i2f":
        a = np.concatenate([rng.integers(-2 ** 31, 2 ** 31, n), [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 16777217, -16777219,
                                                                   33554435, 2 ** 24 + 2, 2 ** 30 + 64, 3]])
        bexp = rng.integers(0, 63, n).astype(np.uint64)
        b = np.concatenate([(rng.integers(0, M64, n, dtype=np.uint64, endpoint=True) >> bexp).view(np.int64),
                            [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 53 + 1, -(2 ** 53 + 3), 2 ** 62 + 2 ** 9,
                             2 ** 24 + 1, -2, (2 ** 40 + 1) * 2 ** 20]])
        return [a.astype(np.int32), b.astype(np.int64)]
    if name in ("farith", "darith"):
        fmt = F32 if name == "farith" else F64
        e = edge_floats(fmt)
        cols = []
        for j in range(3):
            cols.append(np.concatenate([random_floats(rng, n // 2, fmt), wide(rng, n // 2, fmt), e,
                                        np.roll(e, 5 * j + 1), rng.uniform(0.5, 2, 32).astype(fmt["np"])]))
        half = n // 2 + n // 2
        cols[1][half:half + len(e)] = -cols[0][half:half + len(e)]   # exact cancellations
        if fmt is F32:   # products and quotients just below the least normal float, reciprocals near it
            m = rng.uniform(0.5, 1, 24).astype(np.float32)
            below = np.nextafter((np.float32(FLT_MIN) / m).astype(np.float32), np.float32(0))
            x = (rng.uniform(1, 2, 24) * FLT_MIN).astype(np.float32)
            y = (x / np.float32(FLT_MIN) * (1 + rng.integers(1, 4, 24) * 2.0 ** -23)).astype(np.float32)
            r = (2.0 ** 126 * (1 + rng.integers(-3, 4, 24) * 2.0 ** -23)).astype(np.float32)
            cols = [np.concatenate([col, p, q]) for col, p, q in
                    zip(cols, (m, below, np.zeros(24, np.float32)), (x, y, r))]
        return cols
    if name == "fast":
        t = np.float32
        a = np.concatenate([rng.uniform(-10, 10, n // 2), rng.uniform(-3.14, 3.14, n // 4),
                            10.0 ** rng.uniform(-3, 2, n // 4), edge_floats(F32),
                            [1e-40, -1e-40, 1e-39, 89.0, -104.0, 1e-38, 2.0, 0.0, 1.0, -2.0, np.inf, -90.0, -100.0,
                             0.5, 0.0, 1.0, -8.0, 3.0, -np.inf, 2.0 ** -130]]).astype(t)
        b = np.concatenate([rng.uniform(-4, 4, n // 2), rng.uniform(0.5, 2, n // 4),
                            10.0 ** rng.uniform(-3, 38, n // 4), np.roll(edge_floats(F32), 3),
                            [1.0, 2.0, 3e38, -9e37, 0.0, 0.0, np.inf, 2.0, 0.5, 2.0, 3e38, 0.0, 0.0, 140.0, 0.0,
                             np.inf, 1 / 3, 1e-40, 3e38, -1.0]]).astype(t)
        return [a, b]
    if name == "minmax":
        e = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45], np.float32)
        ea, eb = (v.ravel() for v in np.meshgrid(e, e))
        a = np.concatenate([ea, rng.standard_normal(n).astype(np.float32)])
        b = np.concatenate([eb, rng.standard_normal(n).astype(np.float32)])
        c = np.concatenate([np.roll(ea, 4).astype(np.float64), rng.standard_normal(n)])
        return [a, b, c]
    fmt = F32 if name == "mathf" else F64
    t = fmt["np"]
    eps = float(np.finfo(t).eps)
    e = edge_floats(fmt)
    a = np.concatenate([wide(rng, n, fmt), e, rng.integers(-100, 100, 16) + 0.5,
                        rng.integers(-1000, 1000, 16)]).astype(t)
    size = len(a)
    bb = np.concatenate([rng.uniform(-1, 1, n // 2), 10.0 ** rng.uniform(-30, 0, n // 4) * rng.choice([-1, 1], n // 4),
                         1 - rng.integers(1, 100, n // 8) * eps / 2, -1 + rng.integers(1, 100, n // 8) * eps / 2,
                         [1.0, -1.0, 0.0, -0.0, np.nan, 1.5, -2.0, 0.5, -0.5, 1e-30]]).astype(t)
    cc = np.concatenate([rng.uniform(0, 2, n // 2), 10.0 ** rng.uniform(-37 if t is np.float32 else -300, -1, n // 4),
                         2 - rng.integers(1, 100, n // 8) * eps, 1 + rng.integers(-50, 50, n // 8) * eps,
                         [0.0, 2.0, 1.0, np.nan, -1.0, 3.0, 0.5, 1.5, float(np.finfo(t).smallest_subnormal),
                          -0.0]]).astype(t)
    b = np.resize(bb, size)
    c = np.resize(cc, size)
    b[:len(bb)], c[:len(cc)] = bb, cc
    inf, nan = np.inf, np.nan
    special = np.array([(inf, nan, 1), (nan, inf, 1), (nan, 1, 1), (-inf, 0, 0), (0, 0, 0), (-0.0, -0.0, 0),
                        (1, nan, inf), (1, -inf, nan), (0, 0, nan), (3, 4, 0), (-3, 4, 12), (tiny := float(
                            np.finfo(t).smallest_subnormal), tiny, tiny), (1e-30, 1e-30, 0)], dtype=t).T
    return [np.concatenate([col, sp]) for col, sp in zip((a, b, c), special)]


# ---- 60-digit references for the math functions ----------------------------------------------------
PREC = 60
_PI = []


def _ctx():
    """The working precision, with an overflow giving Infinity rather than raising."""
    ctx = getcontext().copy()
    ctx.prec = PREC + 20
    ctx.traps[Overflow] = False
    return localcontext(ctx)


def d_pi():
    if not _PI:
        with localcontext() as ctx:
            ctx.prec = PREC + 40

            def atan_inv(k):   # arctan(1/k), Taylor
                x = Decimal(1) / k
                s, term, n, x2 = Decimal(0), x, 1, x * x
                while term != 0:
                    s += term / n if (n // 2) % 2 == 0 else -term / n
                    term *= x2
                    n += 2
                return s
            _PI.append(16 * atan_inv(5) - 4 * atan_inv(239))
    return _PI[0]


def dec(q):
    """A Fraction or float as a Decimal at the working precision."""
    q = Fraction(q)
    return Decimal(q.numerator) / Decimal(q.denominator)


def _taylor(t, s, term, k):
    """The sine (s = term = t, k = 1) or cosine (s = term = 1, k = 0) series from its first term."""
    s = Decimal(0)
    while term != 0 and (abs(term) > abs(s) * Decimal(10) ** (-PREC - 10) or s == 0):
        s += term
        term = -term * t * t / ((k + 1) * (k + 2))
        k += 2
    return s


def d_sin(t):
    return _taylor(t, t, t, 1)


def d_cos(t):
    return _taylor(t, 1, Decimal(1), 0)


def _erf_series(x):
    """erf(x) by its Taylor series, at extra precision for the cancellation in it."""
    with localcontext() as ctx:
        ctx.prec = PREC + 60
        s, term, n, x2 = Decimal(0), x, 0, x * x
        while abs(term) > abs(s) * Decimal(10) ** (-PREC - 10) or n < 2:
            s += term / (2 * n + 1)
            n += 1
            term = -term * x2 / n
        r = 2 / d_pi().sqrt() * s
    return +r


def _erfc_cf(x):
    """erfc(x) for x >= 8, by its continued fraction."""
    t = x
    for k in range(400, 0, -1):
        t = x + Decimal(k) / 2 / t
    return (-x * x).exp() / d_pi().sqrt() / t


def d_erfc(x):
    if x < 0:
        return 2 - d_erfc(-x)
    return 1 - _erf_series(x) if x < 8 else _erfc_cf(x)


def d_erf(x):
    return _erf_series(x) if abs(x) < 8 else 1 - d_erfc(x)


def d_erfcx(x):
    if x >= 8:
        t = x
        for k in range(400, 0, -1):
            t = x + Decimal(k) / 2 / t
        return 1 / d_pi().sqrt() / t
    return (x * x).exp() * d_erfc(x)


def d_normcdf(x):
    return d_erfc(-x / Decimal(2).sqrt()) / 2


def d_bessel_i(x, order):
    q, term = x * x / 4, (x / 2 if order else Decimal(1))
    s, k = term, 1
    while abs(term) > abs(s) * Decimal(10) ** (-PREC - 5) or k < 3:
        term = term * q / (k * (k + order))
        s += term
        k += 1
    return s


def ref_math(key, fmt, a, b, c):
    """The exact value (a Decimal, within 1 ulp expected) or the special value (a float, exactly)
    of math function `key` at the item's arguments."""
    nan, inf = math.nan, math.inf
    x = a
    if key in ("rsqrt", "rcbrt", "sinpi", "cospi", "sincospi_s", "sincospi_c", "normcdf", "erfcx", "bessel_i0",
               "bessel_i1", "exp10") and math.isnan(x):
        return nan
    if key == "rsqrt":
        if x == 0:
            return math.copysign(inf, x)
        if x < 0:
            return nan
        return 0.0 if math.isinf(x) else 1 / dec(x).sqrt()
    if key == "rcbrt":
        if x == 0 or math.isinf(x):
            return math.copysign(0.0 if x else inf, x)
        r = 1 / abs(dec(x)) ** (Decimal(1) / 3)
        return r if x > 0 else -r
    if key in ("sinpi", "sincospi_s"):
        if math.isinf(x):
            return nan
        q = Fraction(x)
        r = q - 2 * round(q / 2)   # in [-1, 1]
        if r.denominator == 1:
            return math.copysign(0.0, x)
        return d_sin(d_pi() * dec(r))
    if key in ("cospi", "sincospi_c"):
        if math.isinf(x):
            return nan
        q = abs(Fraction(x))
        r = q - 2 * math.floor(q / 2)
        if r in (Fraction(1, 2), Fraction(3, 2)):
            return 0.0
        return d_cos(d_pi() * dec(r))
    if key == "normcdf":
        return 1.0 if x == inf else 0.0 if x == -inf else d_normcdf(dec(x))
    if key == "erfcx":
        return 0.0 if x == inf else inf if x == -inf else d_erfcx(dec(x))
    if key in ("bessel_i0", "bessel_i1"):
        order = key == "bessel_i1"
        if abs(x) > (100 if fmt is F32 else 720):
            return math.copysign(inf, x) if order else inf
        if x == 0:
            return x if order else 1.0
        return d_bessel_i(dec(x), order)
    if key == "exp10":
        return inf if x == inf else 0.0 if x == -inf else (dec(x) * Decimal(10).ln()).exp()
    vec = {"rhypot": (a, b), "norm3d": (a, b, c), "rnorm3d": (a, b, c), "norm4d": (a, b, c, b),
           "rnorm4d": (a, b, c, b), "norm": (a, b, c), "rnorm": (a, b, c)}[key]
    recip = key.startswith("r")
    if any(math.isinf(v) for v in vec):
        return 0.0 if recip else inf
    if any(math.isnan(v) for v in vec):
        return nan
    s = sum(Fraction(v) ** 2 for v in vec)
    if s == 0:
        return inf if recip else 0.0
    r = dec(s).sqrt()
    return 1 / r if recip else r


def ref_inverse(key, fmt, a, b, c):
    """(value, forward function, argument) for the inverse functions: the value (a float) where
    it is exact, else None with the function whose inverse the result must bracket."""
    nan, inf = math.nan, math.inf
    if key == "erfinv":
        y = b
        if math.isnan(y) or abs(y) > 1:
            return nan, None, y
        if abs(y) == 1 or y == 0:
            return (math.copysign(inf, y) if y else y), None, y
        return None, d_erf, y
    if key == "erfcinv":
        z = c
        if math.isnan(z) or z < 0 or z > 2:
            return nan, None, z
        if z in (0, 1, 2):
            return {0: inf, 1: 0.0, 2: -inf}[z], None, z
        return None, d_erfc, z
    p = float(fmt["np"](0.5) * fmt["np"](c))
    if math.isnan(p) or p < 0 or p > 1:
        return nan, None, p
    if p in (0, 0.5, 1):
        return {0: -inf, 0.5: 0.0, 1: inf}[p], None, p
    return None, d_normcdf, p


def ulp_error(got, ref, fmt):
    """|got - ref| in units in the last place of the format at ref (subnormal spacing at least)."""
    if math.isnan(got):
        return math.inf
    maxf = (2 - Fraction(2) ** (1 - fmt["bits"])) * Fraction(2) ** fmt["emax"]
    if ref.is_infinite() or abs(ref) > dec(maxf) * (1 + Decimal(2) ** -fmt["bits"]):
        return 0.0 if math.isinf(got) and (got > 0) == (ref > 0) else math.inf
    if math.isinf(got):
        return math.inf
    r = Fraction(ref)
    e = (abs(r).numerator.bit_length() - abs(r).denominator.bit_length()) if r else fmt["emin"]
    if r and Fraction(2) ** e > abs(r):
        e -= 1
    ulp = Fraction(2) ** (max(e, fmt["emin"]) - fmt["bits"] + 1)
    return float(abs(Fraction(got) - r) / ulp)


def same_float(got, want):
    """Equal as IEEE values, with the sign of zero; any NaN equals any NaN."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


# ---- the tests -------------------------------------------------------------------------------------------
def _report(bad, what):
    assert not bad, f"{len(bad)} {what} differ, e.g. " + "; ".join(map(str, bad[:6]))


def test_integer_intrinsics(rng):
    a, b, c = family_inputs("ints", rng)
    out = run_family("ints", [a, b, c])
    bad = []
    for key, t, _, ref in INT_ITEMS:
        for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
            want = ref(x, y, z)
            want = s32(want) if t == "i4" else want & M32 if t == "u4" else s64(want) if t == "i8" else want & M64
            if int(out[key][i]) != want:
                bad.append((key, hex(x), hex(y), hex(z), int(out[key][i]), want))
    _report(bad, "integer intrinsic results")


def test_simd_intrinsics(rng):
    a, b = family_inputs("simd", rng)
    out = run_family("simd", [a, b])
    bad = []
    for op, (ref, _) in SIMD_OPS.items():
        for w, lanes in ((2, 16), (4, 8)):
            got = out[f"{op}{w}"]
            for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
                want = ref(x, y, lanes) & M32
                if int(got[i]) != want:
                    bad.append((f"__{op}{w}", hex(x), hex(y), hex(int(got[i])), hex(want)))
    _report(bad, "SIMD intrinsic results")


@pytest.mark.parametrize("family", ["f2i", "d2i"])
def test_float_to_integer_conversions(rng, family):
    (x,) = family_inputs(family, rng)
    out = run_family(family, [x])
    items = F2I_ITEMS if family == "f2i" else D2I_ITEMS
    bad = []
    for key, t, _, spec in items:
        got = out[key]
        for i, v in enumerate(x.tolist()):
            if isinstance(spec, tuple):   # to an integer: a float operand flushed (-ftz=true)
                want = ref_to_int(ftz(v) if family == "f2i" else v, *spec, double=family == "d2i")
                ok = int(got[i]) == want
            elif isinstance(spec, str):   # double -> float, flushed where tiny after rounding
                want = v if not math.isfinite(v) or v == 0 else round_fraction(Fraction(v), F32, spec)
                if math.isfinite(v) and abs(round_fraction(Fraction(v), F32_UNBOUNDED, spec)) < FLT_MIN:
                    want = math.copysign(0.0, v)
                ok = same_float(float(got[i]), want)
            else:
                bits = x[i:i + 1].view(np.uint32 if family == "f2i" else np.uint64)[0]
                want = {"float_as_int": s32(int(bits)), "float_as_uint": int(bits),
                        "int_as_float": int(bits) ^ 0x80000000, "uint_as_float": int(bits),
                        "double2hiint": s32(int(bits) >> 32), "double2loint": s32(int(bits)),
                        "hiloint2double": int(bits), "double_as_longlong": s64(int(bits)),
                        "longlong_as_double": int(bits) ^ 1}[key]
                raw = got[i:i + 1].view({"f4": np.uint32, "f8": np.uint64}.get(t, got.dtype))[0]
                ok = int(raw) == want
            if not ok:
                bad.append((key, v, got[i], want))
    _report(bad, "conversion results")


def test_integer_to_float_conversions(rng):
    a, b = family_inputs("i2f", rng)
    out = run_family("i2f", [a, b])
    bad = []
    for key, _, _, (arg, signed, fmt, mode) in I2F_ITEMS:
        for i in range(len(a)):
            v = int(a[i]) if arg == "a" else int(b[i])
            if not signed:
                v &= M32 if arg == "a" else M64
            want = round_fraction(Fraction(v), fmt, mode)
            if not same_float(float(out[key][i]), want):
                bad.append((key, v, float(out[key][i]), want))
    _report(bad, "integer-to-float conversions")


@pytest.mark.parametrize("family,ftz_mode", [("farith", 1), ("farith", 0), ("darith", 1)])
def test_arithmetic_in_each_rounding_mode(rng, family, ftz_mode):
    """Every result bit-exact (NaN as any NaN): the IEEE operation, exactly rounded each way;
    under KC_FTZ=1 (the default, CuPy's -ftz=true) subnormal float operands are zero, and so
    are tiny results: those whose exact value rounded to 24 bits with no exponent limit is
    below FLT_MIN (as an H100 decides; not in __fmaf_ieee_*); with -DKC_FTZ=0 subnormals stay."""
    cols = family_inputs(family, rng)
    out = run_family(family, cols, options=() if ftz_mode else NO_FTZ)
    fmt = F32 if family == "farith" else F64
    items = FARITH_ITEMS if family == "farith" else DARITH_ITEMS
    xs, ys, zs = (c.tolist() for c in cols)
    bad = []
    for key, _, _, (op, mode) in items:
        got = out[key]
        for i in range(len(xs)):
            want = ref_arith(op, mode, fmt, xs[i], ys[i], zs[i], flush=bool(ftz_mode))
            if not same_float(float(got[i]), want):
                bad.append((key, xs[i], ys[i], zs[i], float(got[i]), want))
    _report(bad, "rounded results")


def test_rounding_mode_is_restored_and_not_folded():
    """Constant operands (which g++ could fold at compile time in round-to-nearest) and plain
    arithmetic after a directed intrinsic, which must run in round-to-nearest again."""
    src = r'''extern "C" __global__ void k(float* out) {
        out[0] = __fadd_ru(1.0f, 1e-20f); out[1] = __fadd_rd(1.0f, 1e-20f); out[2] = __fdiv_ru(1.0f, 3.0f);
        out[3] = __fdiv_rd(1.0f, 3.0f); volatile float one = 1.0f, third = 1e-8f;
        out[4] = one + third; out[5] = __frcp_rz(3.0f); out[6] = __fsqrt_ru(2.0f); out[7] = one / 3.0f;
    }'''
    out = np.zeros(8, np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (out,))
    up, down = np.nextafter(np.float32(1), np.float32(2)), np.float32(1)
    assert out[0] == up and out[1] == down
    assert out[2] == np.nextafter(np.float32(1 / 3), np.float32(1)) or out[2] == np.float32(1 / 3)
    assert out[2] > out[3] and out[4] == 1.0 and out[7] == np.float32(1 / 3)
    assert out[5] == np.float32(0.3333333) and out[6] ** 2 > 2


def test_fast_math_intrinsics(rng):
    """__log2f's, __logf's and __log10f's the GPU's (lg2.approx: within the Guide's bounds,
    LG2_GUIDE_NEAR_ONE on [1/2, 2], 2, 3 and 3 ulp elsewhere); __expf's and __exp10f's the GPU's
    (ex2.approx of x log2(e) and x log2(10): within the Programming Guide's 2 + floor(|1.173 x|)
    and 2 + floor(|2.97 x|) ulp), and __sinf's,
    __cosf's and __sincosf's (sin.approx and cos.approx: within 2^-21.2 of the exact value on
    [-pi, pi]: the H100's own, which the CPU runtime gives bit for bit, reach 2^-21.24 there,
    past the Programming Guide's 2^-21.41; at most 1 in magnitude beyond); __tanf's and __powf's
    the GPU's chains (their bits: test_gpu_math_functions_2), within what the Guide derives
    from them: sin.approx's and cos.approx's errors through the quotient on [-pi, pi], and
    lg2.approx's error times |y| through ex2.approx, plus ex2.approx's 2 ulp and the roundings; a
    GPU's flushing of subnormal arguments and results to zero, NaN for __powf of x < 0, 0^0, 1^inf
    and inf^0, and __fdividef's zero quotient (its bits: test_gpu_math_tables)."""
    a, b = family_inputs("fast", rng)
    out = run_family("fast", [a, b])
    fns = {"expf": math.exp, "exp10f": lambda x: 10.0 ** x, "logf": math.log, "log2f": math.log2,
           "log10f": math.log10, "sinf": math.sin, "cosf": math.cos, "sincosf_s": math.sin, "sincosf_c": math.cos}
    spacing = lambda v: abs(float(np.spacing(np.float32(abs(v)))))   # noqa: E731
    tiny = float(np.finfo(np.float32).tiny)
    ftz = lambda v: math.copysign(0.0, v) if abs(v) < tiny else v   # noqa: E731
    bad = []
    np.seterr(over="ignore")
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        xf = ftz(x)
        for key, f in fns.items():
            got = float(out[key][i])
            try:
                exact = f(xf) if not (key.startswith("log") and xf <= 0) else (-math.inf if xf == 0 else math.nan)
            except (OverflowError, ValueError):
                exact = math.inf if key in ("expf", "exp10f") else math.nan
            if math.isnan(xf) or (math.isinf(xf) and key in ("sinf", "cosf", "tanf", "sincosf_s", "sincosf_c")):
                exact = math.nan
            want = ftz(float(np.float32(exact))) if math.isfinite(exact) else exact
            if key in ("sinf", "cosf", "sincosf_s", "sincosf_c") and math.isfinite(xf):
                if not (abs(got) <= 1 and (abs(xf) > math.pi or abs(got - exact) <= 2.0 ** -21.2)):
                    bad.append((key, x, got, exact))
            elif key in LG2_GUIDE_NEAR_ONE and 0.5 <= xf <= 2:
                if abs(got - exact) > LG2_GUIDE_NEAR_ONE[key]:
                    bad.append((key, x, got, exact))
            elif math.isfinite(want) and math.isfinite(got) and want != 0:
                ulps = 2 + math.floor(abs({"expf": 1.173, "exp10f": 2.97}.get(key, 0) * xf))
                ulps += key in ("logf", "log10f")
                if abs(got - want) > ulps * abs(float(np.spacing(np.float32(want)))):
                    bad.append((key, x, got, want))
            elif not same_float(got, want) and not (want == 0 and got == 0):
                bad.append((key, x, got, want))
        xs, ys = ftz(x), ftz(y)
        lg = math.nan if xs < 0 or math.isnan(xs) else -math.inf if xs == 0 else math.log2(xs)
        e = ys * lg if not ((ys == 0 and math.isinf(lg)) or (math.isinf(ys) and lg == 0)) else math.nan
        want = math.nan if math.isnan(e) else ftz(float(np.float32(2.0 ** e if e < 1024 else math.inf)))
        got = float(out["powf"][i])
        if math.isfinite(want) and want != 0:   # 2^(e + de), de lg2's error times |y| and the product's rounding
            de = abs(ys) * max(2.0 ** -22, 2 * spacing(lg)) + spacing(e) / 2
            if abs(got - want) > (3 + math.log(2) * de * 2.0 ** 24) * spacing(want):
                bad.append(("powf", x, y, got, want))
        elif not same_float(got, want):
            bad.append(("powf", x, y, got, want))
        got = float(out["tanf"][i])
        sine, cosine = (math.sin(xf), math.cos(xf)) if math.isfinite(xf) else (math.nan, math.nan)
        if not math.isfinite(xf):
            if not math.isnan(got):
                bad.append(("tanf", x, got, math.nan))
        elif abs(xf) <= math.pi and abs(cosine) > 2.0 ** -20:   # (s + ds) / (c + dc), |ds|, |dc| <= 2^-21.2
            err = 2.0 ** -21.2 * (abs(sine) + abs(cosine)) / (abs(cosine) * (abs(cosine) - 2.0 ** -21.2))
            if abs(got - sine / cosine) > err + 2 * spacing(sine / cosine):
                bad.append(("tanf", x, got, sine / cosine))
        ay = abs(ys)
        if 2.0 ** 126 < ay < math.inf:
            want = math.nan if math.isinf(xs) or math.isnan(xs) else math.copysign(0.0, xs) * math.copysign(1, ys)
        else:   # x times rcp.approx(y): within 2 ulp of the quotient (test_gpu_math_tables has its bits)
            want = ftz(ref_div(xs, ys, F32, "rn"))
        got = float(out["fdividef_fast"][i])
        if not (same_float(got, want) or (math.isfinite(want) and want != 0 and
                                         abs(got - want) <= 2 * abs(float(np.spacing(np.float32(want)))))):
            bad.append(("fdividef", x, y, got, want))
        want = 0.0 if math.isnan(xs) or xs <= 0 else min(xs, 1.0)
        if not same_float(float(out["saturatef"][i]), want):
            bad.append(("saturatef", x, float(out["saturatef"][i]), want))
    _report(bad, "fast-math results")


# Float functions the CPU runtime computes as the GPU does (cpu/src/kc_gpu_math.h), held to CUDA's
# bound for them: 2 ulp for the special-function unit's approximations (cpu/gpumath.py); the
# Programming Guide's bound from the correctly rounded result, plus the half ulp that result may
# be from the exact value, for CUDA's own sinpif, cospif, sincospif (1), exp10f (2) and normcdff (5).
GPU_BOUNDS = {"rsqrt": 2, "rnorm3d": 2, "sinpi": 1.5, "cospi": 1.5, "sincospi_s": 1.5, "sincospi_c": 1.5,
              "exp10": 2.5, "normcdf": 5.5}


@pytest.mark.parametrize("family", ["mathf", "mathd"])
def test_math_functions_within_one_ulp(rng, family):
    """Within 1 ulp of the 60-digit value (CUDA's own bounds are 1 to 8 ulp; 2 for the float
    functions that are the GPU's own, GPU_BOUNDS); the inverse
    functions' results bracket the exact inverse within 1 ulp; special values exactly; float
    arguments and results that are subnormal flushed to zero (-ftz=true, the default)."""
    fmt = F32 if family == "mathf" else F64
    cols = family_inputs(family, rng, n=96)
    out = run_family(family, cols)
    items = MATHF_ITEMS if family == "mathf" else MATHD_ITEMS
    bad, worst = [], {}
    with _ctx():
        for key, _, _ in items:
            got_all = out[key]
            if key.startswith("ovl_"):   # a float overload: the float function's value exactly
                np.testing.assert_array_equal(got_all.view(np.uint32), out[key[4:]].view(np.uint32), key)
                continue
            flush = fmt is F32
            for i in range(len(cols[0])):
                a, b, c = (float(col[i]) for col in cols)
                if flush:
                    a, b, c = ftz(a), ftz(b), ftz(c)
                got = float(got_all[i])
                if key in ("erfinv", "erfcinv", "normcdfinv"):
                    value, fwd, y = ref_inverse(key, fmt, a, b, c)
                    if value is not None:
                        if not same_float(got, value):
                            bad.append((key, y, got, value))
                        continue
                    if flush and got == 0 and abs(fwd(dec(FLT_MIN)) - fwd(dec(0))) > abs(dec(y) - fwd(dec(0))):
                        continue   # the inverse is subnormal: flushed
                    lo, hi = nextf(got, fmt, up=False), nextf(got, fmt)
                    flo, fhi, ydec = fwd(dec(lo)), fwd(dec(hi)), dec(y)
                    if not (math.isfinite(got) and min(flo, fhi) <= ydec <= max(flo, fhi)):
                        bad.append((key, y, got, "not within 1 ulp of the inverse"))
                    continue
                want = ref_math(key, fmt, a, b, c)
                if flush and isinstance(want, Decimal) and want.is_finite() and abs(want) < dec(FLT_MIN):
                    if not (got == 0 and math.copysign(1, got) == (-1 if want < 0 else 1)) and abs(got) != FLT_MIN:
                        bad.append((key, a, b, c, got, f"{want:.9e} flushed"))
                    continue
                if flush and isinstance(want, float):
                    want = ftz(want)
                if isinstance(want, float):
                    if not same_float(got, want):
                        bad.append((key, a, b, c, got, want))
                    continue
                err = ulp_error(got, want, fmt)
                worst[key] = max(worst.get(key, 0), err)
                if err > (GPU_BOUNDS.get(key, 1) if fmt is F32 else 1):
                    bad.append((key, a, b, c, got, f"{err:.2f} ulp from {want:.20e}"))
    print("largest errors (ulp):", {k: round(v, 3) for k, v in worst.items()})
    _report(bad, "math results")


def _fmin(x, y, lo):
    """A GPU's min/max: a NaN argument gives the other one; -0 below +0."""
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if x == y:
        return (x if math.copysign(1, x) < 0 else y) if lo else (x if math.copysign(1, x) > 0 else y)
    return min(x, y) if lo else max(x, y)


def test_float_min_max(rng):
    a, b, c = family_inputs("minmax", rng)
    out = run_family("minmax", [a, b, c])
    bad = []
    for i, (x0, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        x, yf = ftz(x0), ftz(y)   # float arguments flushed; (double)b is the kernel's own conversion
        want = {"min_ff": _fmin(x, yf, True), "max_ff": _fmin(x, yf, False), "min_fd": _fmin(x, z, True),
                "max_df": _fmin(z, x, False), "min_dd": _fmin(y, z, True), "max_dd": _fmin(z, y, False)}
        for key, w in want.items():
            if not same_float(float(out[key][i]), w):
                bad.append((key, x, y, z, float(out[key][i]), w))
    _report(bad, "min/max results")


def test_overloads_and_types():
    """CUDA's overload set: the result types nvcc gives, checked at compile time."""
    src = r'''
    template <class A, class B> struct same { static constexpr bool v = false; };
    template <class A> struct same<A, A> { static constexpr bool v = true; };
    #define IS(T, E) static_assert(same<decltype(E), T>::v, #E)
    IS(unsigned int, min(1, 2u)); IS(unsigned int, max(2u, -1)); IS(int, min(1, 2)); IS(long, max(1l, 2l));
    IS(unsigned long, min(1l, 2ul)); IS(long long, min(1ll, 2ll)); IS(unsigned long long, max(1ll, 2ull));
    IS(float, min(1.0f, 2.0f)); IS(double, max(1.0f, 2.0)); IS(double, min(1.0, 2.0f));
    IS(int, min((short)1, (short)2));
    IS(float, rsqrt(1.0f)); IS(double, rsqrt(1.0)); IS(float, sinpi(1.0f)); IS(float, cospi(1.0f));
    IS(float, erfinv(0.5f)); IS(float, erfcinv(0.5f)); IS(float, normcdfinv(0.5f)); IS(float, normcdf(0.5f));
    IS(float, erfcx(0.5f)); IS(float, rcbrt(0.5f)); IS(float, exp10(0.5f)); IS(float, cyl_bessel_i0(0.5f));
    IS(float, j0(0.5f)); IS(float, sqrt(2.0f)); IS(float, fabs(2.0f)); IS(double, sqrt(2));
    IS(int, __float2int_rn(1.0f)); IS(unsigned long long, __double2ull_rz(1.0)); IS(long long, clock64());
    static_assert(sizeof(clock()) == 8, "clock()"); IS(float, __ldg((const float*)0));
    IS(int, __dp4a(make_char4(1, 2, 3, 4), make_char4(1, 1, 1, 1), 0));
    IS(unsigned int, __dp4a(make_uchar4(1, 2, 3, 4), make_uchar4(1, 1, 1, 1), 0u));
    extern "C" __global__ void k(float* f, double* d, int* i) {
        i[0] = isnan(f[0]) + 2 * isinf(d[0]) + 4 * isfinite(f[1]) + 8 * (signbit(d[1]) != 0) + 16 * __isnanf(f[0])
             + 32 * (__isinf(d[0]) != 0) + 64 * (__finitef(f[1]) != 0) + 128 * (__signbit(d[1]) != 0);
        float s, c; sincos(f[1], &s, &c); f[2] = s * s + c * c; sincosf(f[1], &s, &c); f[3] = s;
        double ds, dc; sincos(d[1], &ds, &dc); d[2] = ds; f[4] = exp10f(2.0f); d[3] = exp10(-1.0);
        f[5] = __ldcs(&f[1]) + __ldcg(f + 1) + __ldca(f + 1) + __ldlu(f + 1) + __ldcv(f + 1);
        __stcg(f + 6, 1.5); __stwb(f + 7, 2); __stcs(d + 4, 2.5f); __stwt(i + 1, 7);
        float3 v3 = make_float3(1, 2, 3); float3 w3 = __ldg(&v3); f[8] = w3.z;
        __nanosleep(100); __prof_trigger(3); f[9] = __saturatef(7.0f); f[10] = fdividef(1.0f, 4.0f);
    }'''
    f = np.array([np.nan, 0.5] + [0] * 9, np.float32)
    d = np.array([-np.inf, -0.0, 0, 0, 0], np.float64)
    i = np.zeros(2, np.int32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (f, d, i))
    assert i[0] == 255 and i[1] == 7
    assert abs(f[2] - 1) < 1e-6 and f[3] == np.float32(math.sin(np.float32(0.5))) and d[2] == 0.0
    assert math.copysign(1, d[2]) == -1 and f[4] == 100 and abs(d[3] - 0.1) < 3e-17 and f[5] == 2.5
    assert f[6] == 1.5 and f[7] == 2 and d[4] == 2.5 and f[8] == 3 and f[9] == 1 and f[10] == 0.25


def test_clock64_and_clock_advance():
    """clock64() counts nanoseconds of a monotonic clock; clock() is the same 64-bit counter (as
    on an H100), not C's clock(); __nanosleep returns (0 is a duration a GPU may sleep)."""
    src = r'''extern "C" __global__ void t(long long* out) {
        long long a = clock64(); long long c0 = clock(); float s = 0;
        for (int i = 0; i < 200000; ++i) s += i * 1e-9f;
        __nanosleep(1000000); long long b = clock64(); long long c1 = clock();
        out[0] = b - a; out[1] = (long long)s; out[2] = (long long)c0; out[3] = (long long)c1;
        out[4] = (long long)c1 - b; out[5] = sizeof(clock());
    }'''
    out = np.zeros(6, np.int64)
    cudacheck.RawKernel(src, "t", backend="cpu")((1,), (1,), (out,))
    assert 0 < out[0] < 10 ** 9 and out[5] == 8
    assert 0 < out[3] - out[2] < 10 ** 9 and 0 <= out[4] < 10 ** 7


def test_checked_mode_compiles_the_header(rng):
    """Checked mode (ThreadSanitizer instrumentation) builds and runs a family unchanged."""
    a, b = family_inputs("simd", rng, n=64)
    plain = run_family("simd", [a, b])
    checked = run_family("simd", [a, b], check=True)
    for key in plain:
        np.testing.assert_array_equal(plain[key], checked[key])
