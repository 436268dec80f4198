"""__half and __nv_bfloat16 on the CPU runtime (cpu/src/kc_lowp.h, cpu/include/cuda_fp16.h, cuda_bf16.h):
conversions from float round to nearest even, bit for bit, on a million random floats and on
every edge (subnormals, ties, overflow, NaN), against NumPy's float16 and an independent
bfloat16 rounding; the conversions back are exact; arithmetic is correctly rounded."""
import numpy as np
import pytest

import cudacheck

SRC = r'''
#include <cuda_bf16.h>
extern "C" __global__ void convert(const float* x, unsigned short* h, unsigned short* b, float* hf, float* bf, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        __half v = __float2half_rn(x[i]);
        __nv_bfloat16 w = __float2bfloat16(x[i]);
        h[i] = __half_as_ushort(v);
        b[i] = __bfloat16_as_ushort(w);
        hf[i] = __half2float(v);
        bf[i] = __bfloat162float(w);
    }
}
extern "C" __global__ void half_ops(const __half* a, const __half* b, __half* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[4 * i + 0] = a[i] + b[i];
        out[4 * i + 1] = __hsub(a[i], b[i]);
        out[4 * i + 2] = a[i] * b[i];
        out[4 * i + 3] = __hfma(a[i], b[i], a[i]);
    }
}
extern "C" __global__ void bf16_ops(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[4 * i + 0] = a[i] + b[i];
        out[4 * i + 1] = a[i] - b[i];
        out[4 * i + 2] = __hmul(a[i], b[i]);
        out[4 * i + 3] = __hfma(a[i], b[i], a[i]);
    }
}
'''


@pytest.fixture(scope="module")
def mod():
    return cudacheck.RawModule(SRC, backend="cpu")


def bf16_reference(x):
    """float32 -> bfloat16 bits, round to nearest even, in integers (NaN aside)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def exact_ops(A, B):
    """a + b, a - b, a b and a b + a in float64, and whether each is exact there (the products
    of two 16-bit values are; a sum may not be, and TwoSum's error term says so)."""
    with np.errstate(all="ignore"):
        p = A * B
        s = p + A
        bb = s - p
        err = (p - (s - bb)) + (A - bb)
        vals = np.stack([A + B, A - B, p, s], axis=1).reshape(-1)
        exact = np.stack([np.ones_like(p, bool)] * 3 + [err == 0], axis=1).reshape(-1)
    return vals, exact


def edge_floats():
    halves = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = halves[np.isfinite(halves)].astype(np.float32)
    hs = np.sort(np.unique(h.astype(np.float64)))
    mids = (hs[:-1] + hs[1:]) / 2                         # ties between neighbouring halves (exact in float32)
    mids = mids.astype(np.float32)
    near = np.concatenate([np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    top = np.arange(0x10000, dtype=np.uint32) << 16
    bf_mids = (top | 0x8000).view(np.float32)              # ties between neighbouring bfloat16s
    bf_near = np.concatenate([(top | 0x7FFF).view(np.float32), (top | 0x8001).view(np.float32)])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.996, 65520, 65536, 2.0**-24, 2.0**-25,
                        1.5 * 2.0**-25, 2.0**-26, 3.4028235e38, 1e-45, -1e-45, 1.1754942e-38], np.float32)
    nans = np.array([0x7F800001, 0xFFC00000, 0x7FFFFFFF, 0x7FA00000], np.uint32).view(np.float32)
    return np.concatenate([h, mids, near, bf_mids, bf_near, special, nans]).astype(np.float32)


def test_float_to_half_and_bfloat16_bit_for_bit(mod, rng):
    x = np.concatenate([rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        edge_floats()])
    n = x.size
    h, b = np.zeros(n, np.uint16), np.zeros(n, np.uint16)
    hf, bf = np.zeros(n, np.float32), np.zeros(n, np.float32)
    mod.get_function("convert")(64, 256, (x, h, b, hf, bf, n))
    nan = np.isnan(x)
    with np.errstate(all="ignore"):
        want_h = x.astype(np.float16).view(np.uint16)
    bad = np.flatnonzero((h != want_h) & ~nan)
    assert bad.size == 0, f"{bad.size} floats round to other halves, first {x[bad[0]]!r}: {h[bad[0]]:#06x}"
    bad = np.flatnonzero((b != bf16_reference(x)) & ~nan)
    assert bad.size == 0, f"{bad.size} floats round to other bfloat16s, first {x[bad[0]]!r}: {b[bad[0]]:#06x}"
    assert (h[nan] == 0x7FFF).all() and (b[nan] == 0x7FFF).all()   # cvt.rn's canonical NaN
    # back to float: exact
    np.testing.assert_array_equal(hf[~nan], h[~nan].view(np.float16).astype(np.float32))
    np.testing.assert_array_equal(bf[~nan].view(np.uint32), b[~nan].astype(np.uint32) << 16)
    assert np.isnan(hf[nan]).all() and np.isnan(bf[nan]).all()


def test_half_and_bfloat16_arithmetic_is_correctly_rounded(mod, rng):
    n = 200_000
    a = rng.integers(0, 0x10000, n, dtype=np.uint32).astype(np.uint16)
    b = rng.integers(0, 0x10000, n, dtype=np.uint32).astype(np.uint16)
    out = np.zeros(4 * n, np.uint16)
    mod.get_function("half_ops")(64, 256, (a.view(np.float16), b.view(np.float16), out.view(np.float16), n))
    A, B = a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64)
    vals, exact = exact_ops(A, B)   # sums of halves are exact in float64; an fma may not be
    with np.errstate(all="ignore"):
        want = vals.astype(np.float16).view(np.uint16)
    got = out
    nan = np.isnan(want.view(np.float16))
    assert (np.isnan(got.view(np.float16)) == nan)[exact].all()
    nan |= ~exact
    bad = np.flatnonzero((got != want) & ~nan)
    assert bad.size == 0, f"{bad.size} results differ, first at {bad[0]}: {got[bad[0]]:#06x} vs {want[bad[0]]:#06x}"

    def bf(bits):
        with np.errstate(invalid="ignore"):   # NaN bit patterns
            return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    out[:] = 0
    mod.get_function("bf16_ops")(64, 256, (a, b, out, n))
    exact, is_exact = exact_ops(bf(a), bf(b))
    finite = np.isfinite(exact) & (np.abs(exact) < 3.3e38) & is_exact
    # float64 -> float32 may round once before bfloat16 does: compare where float32 holds it exactly
    with np.errstate(all="ignore"):
        exact32 = exact.astype(np.float32)
    ok = finite & (exact32.astype(np.float64) == exact)
    np.testing.assert_array_equal(out[ok], bf16_reference(exact32[ok]))
    assert ok.mean() > 0.5
