"""The device intrinsics and math functions of the CPU runtime (cpu/include/kc_intrinsics.h)
against references computed here, on fresh random inputs and the edge cases (0, -0.0,
infinities, NaN, the integer extremes, ties for the rounding modes)."""
import math
from fractions import Fraction

import numpy as np
import pytest

import kernels

INT_BITS = r'''
extern "C" __global__ void ints(const unsigned* a, const unsigned* b, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    unsigned* o = out + 12 * i;
    o[0] = __popc(x); o[1] = __clz((int)x); o[2] = __ffs((int)x); o[3] = __brev(x);
    o[4] = __byte_perm(x, y, 0x5140u); o[5] = __umulhi(x, y); o[6] = (unsigned)__mulhi((int)x, (int)y);
    o[7] = __umul24(x, y); o[8] = (unsigned)__mul24((int)x, (int)y); o[9] = __sad((int)x, (int)y, 7u);
    o[10] = umin(x, y) + umax(x, y); o[11] = __popcll(((unsigned long long)x << 32) | y) + __ffsll((long long)y << 20);
}'''


def _int24(v):
    v &= 0xFFFFFF
    return v - (1 << 24) if v & 0x800000 else v


def _reference_ints(x, y):
    sx, sy = int(np.int32(np.uint32(x))), int(np.int32(np.uint32(y)))
    both = (x << 32) | y
    ffsll = ((y << 20) & -(y << 20)).bit_length() if y else 0
    return [bin(x).count("1"), 32 - x.bit_length(), (x & -x).bit_length(), int(f"{x:032b}"[::-1], 2),
            int.from_bytes(bytes(((x | (y << 32)).to_bytes(8, "little")[k] for k in (0, 4, 1, 5))), "little"),
            (x * y) >> 32, ((sx * sy) >> 32) & 0xFFFFFFFF, ((x & 0xFFFFFF) * (y & 0xFFFFFF)) & 0xFFFFFFFF,
            (_int24(x) * _int24(y)) & 0xFFFFFFFF, (abs(sx - sy) + 7) & 0xFFFFFFFF, (min(x, y) + max(x, y)) & 0xFFFFFFFF,
            bin(both).count("1") + ffsll]


def test_integer_intrinsics(rng):
    a = np.concatenate([rng.integers(0, 1 << 32, 61, dtype=np.uint64), [0, 1, 0xFFFFFFFF, 0x80000000]]).astype(np.uint32)
    b = np.concatenate([rng.integers(0, 1 << 32, 61, dtype=np.uint64), [0xFFFFFFFF, 0, 1, 0x80000000]]).astype(np.uint32)
    out = np.zeros(12 * a.size, np.uint32)
    kernels.RawKernel(INT_BITS, "ints", backend="cpu")(3, 32, (a, b, out, a.size))
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        assert out[12 * i:12 * i + 12].tolist() == _reference_ints(x, y), (x, y)


CONVERSIONS = r'''
extern "C" __global__ void conv(const float* x, int* r, unsigned* u, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    r[4 * i] = __float2int_rn(x[i]); r[4 * i + 1] = __float2int_rz(x[i]);
    r[4 * i + 2] = __float2int_ru(x[i]); r[4 * i + 3] = __float2int_rd(x[i]);
    u[i] = __float2uint_rn(x[i]);
    int k = __float_as_int(x[i]);
    f[4 * i] = __int_as_float(k); f[4 * i + 1] = __int2float_rz(k); f[4 * i + 2] = __int2float_ru(k);
    f[4 * i + 3] = __fadd_rd(x[i], 1e-9f);
}'''


def _round(v, mode):
    q = Fraction(v)
    fl = math.floor(q)
    if mode == "rz":
        return math.trunc(q)
    if mode == "ru":
        return math.ceil(q)
    if mode == "rd":
        return fl
    d = q - fl
    return fl + (1 if d > Fraction(1, 2) or (d == Fraction(1, 2) and fl % 2) else 0)


def _to_int(v, mode, lo, hi):
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return hi if v > 0 else lo
    return min(max(_round(v, mode), lo), hi)


def _float_rounded(q, mode):
    """The float32 nearest to the rational q in direction `mode`."""
    near = np.float32(float(q))
    cands = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    if mode == "rz":
        return max((c for c in cands if abs(Fraction(float(c))) <= abs(q)), key=lambda c: abs(Fraction(float(c))))
    if mode == "ru":
        return min(c for c in cands if Fraction(float(c)) >= q)
    return max(c for c in cands if Fraction(float(c)) <= q)


def test_conversions_and_rounding_modes(rng):
    x = np.concatenate([rng.standard_normal(40) * 10, rng.standard_normal(10) * 1e10, [0.5, 1.5, 2.5, -0.5, -2.5, 0.0,
                        -0.0, np.inf, -np.inf, np.nan, 3e9, -3e9, 16777217.0, 1e-45]]).astype(np.float32)
    n = x.size
    r, u, f = np.zeros(4 * n, np.int32), np.zeros(n, np.uint32), np.zeros(4 * n, np.float32)
    kernels.RawKernel(CONVERSIONS, "conv", backend="cpu")(3, 32, (x, r, u, f, n))
    for i, v in enumerate(x.tolist()):
        assert r[4 * i:4 * i + 4].tolist() == [_to_int(v, m, -2**31, 2**31 - 1) for m in ("rn", "rz", "ru", "rd")], v
        assert u[i] == _to_int(v, "rn", 0, 2**32 - 1), v
        k = int(x[i:i + 1].view(np.int32)[0])
        assert f[4 * i:4 * i + 1].view(np.int32)[0] == k
        assert f[4 * i + 1] == _float_rounded(Fraction(k), "rz") and f[4 * i + 2] == _float_rounded(Fraction(k), "ru")
        if math.isfinite(v):
            assert f[4 * i + 3] == _float_rounded(Fraction(v) + Fraction(float(np.float32(1e-9))), "rd"), v


MATH = r'''
extern "C" __global__ void m(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    out[6 * i] = normcdff(v); out[6 * i + 1] = rcbrtf(v); out[6 * i + 2] = erfcinvf(fabsf(v) / 4.0f + 0.01f);
    out[6 * i + 3] = rsqrtf(fabsf(v) + 1.0f); out[6 * i + 4] = sinpif(v); out[6 * i + 5] = __saturatef(v);
}'''


def _erfcinv(y):
    """erfc(x) = y by bisection (erfc decreases): a reference that shares nothing with the header's."""
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erfc(mid) > y else (lo, mid)
    return (lo + hi) / 2


def test_math_functions_within_cudas_ulp_bounds(rng):
    x = rng.uniform(-3, 3, 100).astype(np.float32)
    out = np.zeros(600, np.float32)
    kernels.RawKernel(MATH, "m", backend="cpu")(4, 32, (x, out, x.size))
    o = out.reshape(-1, 6).astype(np.float64)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(o[:, 0], [0.5 * math.erfc(-v / math.sqrt(2)) for v in xd], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(o[:, 1], 1 / np.cbrt(xd), rtol=1e-6)
    np.testing.assert_allclose(o[:, 2], [_erfcinv(float(v)) for v in np.abs(x) / np.float32(4) + np.float32(0.01)],
                               rtol=1e-5)
    np.testing.assert_allclose(o[:, 3], 1 / np.sqrt(np.abs(xd) + 1), rtol=1e-6)
    np.testing.assert_allclose(o[:, 4], np.sin(np.pi * xd), atol=1e-6)
    np.testing.assert_array_equal(o[:, 5], np.clip(xd, 0, 1))


def test_clock64_advances():
    k = kernels.RawKernel(r'''extern "C" __global__ void t(long long* out) {
        long long a = clock64(); float s = 0; for (int i = 0; i < 100000; ++i) s += i;
        out[0] = clock64() - a; out[1] = (long long)s; }''', "t", backend="cpu")
    out = np.zeros(2, np.int64)
    k(1, 1, (out,))
    assert out[0] > 0
