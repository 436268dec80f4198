"""--use_fast_math's `a / b + c`: ptxas fuses div.approx.ftz's multiply by the reciprocal with the
add, so the GPU computes fma(a, rcp.approx.ftz(b), c), one rounding (an H100, for every pair it
was given: logs/2026-12-07-h100-lg2-table.md), not the quotient rounded and then the sum. The
CPU runtime does the same in one expression, for each order and sign, and in `s += a / b` and
`s -= a / b`; of `a / b - c * d` the quotient, of `a / b + c * d` the product (cuobjdump of nvcc
13.0's code); a sum in double, or a build without fast math, keeps the quotient rounded first, and so
does a quotient that nvcc computes once because it is written again as a factor
(logs/2026-12-07-cse-contraction.md)."""
import lzma

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath
from tests.support.gpu_float_model import NO_FTZ, flush, fma, rcp_approx_ftz, same_bits

KERNEL = r'''
// Each row its own operands (row r reads element r * n + i): a quotient written twice with the same
// operands is one value to nvcc, fused nowhere unless every use is a sum (rows 10 and 11).
#define ROW(r) float a = x[r * n + i], b = y[r * n + i], c = z[r * n + i]; float* out = o + r * n + i;
extern "C" __global__ void sums(const float* x, const float* y, const float* z, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    { ROW(0) *out = a / b + c; }
    { ROW(1) *out = c + a / b; }
    { ROW(2) *out = a / b - c; }
    { ROW(3) *out = c - (a / b); }
    { ROW(4) *out = a / b + 1e-5; }            // a double sum: the quotient is rounded first
    { ROW(5) *out = (a / b) * 1.5f + c; }      // a product's sum: the product is what is fused
    { ROW(6) float s = c; s += a / b; *out = s; }
    { ROW(7) float t = c; t -= (a / b); *out = t; }
    { ROW(8) *out = a / b - c * 1.5f; }        // a difference fuses its left operand: the quotient
    { ROW(9) *out = a / b + c * 1.5f; }        // a sum its product (NVVM fuses it before ptxas runs)
    { ROW(10) *out = a / b + c; out[n] = (a / b) * c; }   // one quotient, a factor too: not fused
}'''
ROWS = 12
FAST = ("--use_fast_math",)


def run(x, y, z, options, backend="cpu"):
    n = x.shape[1]
    if backend == "gpu":
        import cupy
        o = cupy.zeros(ROWS * n, cupy.float32)
        cudacheck.RawModule(KERNEL, backend="gpu", options=options).get_function("sums")(
            ((n + 255) // 256,), (256,), (cupy.asarray(x.ravel()), cupy.asarray(y.ravel()), cupy.asarray(z.ravel()),
                                          o, np.int32(n)))
        return cupy.asnumpy(o).reshape(ROWS, n)
    o = np.zeros(ROWS * n, np.float32)
    cudacheck.RawModule(KERNEL, backend="cpu", options=options).get_function("sums")(
        ((n + 255) // 256,), (256,), (x.ravel(), y.ravel(), z.ravel(), o, np.int32(n)))
    return o.reshape(ROWS, n)


def operands(rng, n=20000):
    """Each row's quotients and addends, (ROWS, n) each: of every size, many nearly cancelling
    (where one rounding and two differ most), and divisors past 2^126 (whose reciprocal flushes to
    zero)."""
    x, y, z = ((rng.choice([-1.0, 1.0], (ROWS, n)) * 2.0 ** rng.uniform(-30, 30, (ROWS, n))).astype(np.float32)
               for _ in range(3))
    near = n // 2
    z[:, :near] = -(x[:, :near].astype(np.float64) / y[:, :near]).astype(np.float32) * np.float32(1 + 2.0 ** -20)
    y[:, near:near + 50] = np.float32(2.0 ** 127)
    return x, y, z


@pytest.fixture(scope="module")
def tables():
    blob = lzma.decompress(gpumath.DATA.read_bytes())
    return {name: gpumath.decode(name, blob) for name, _ in gpumath.TABLES}


def test_fast_math_fuses_the_quotient_with_the_sum(rng, tables):
    x, y, z = operands(rng)
    out = run(x, y, z, FAST)
    r = rcp_approx_ftz(tables, flush(y))
    x, z = flush(x), flush(z)
    q = flush(x.astype(np.float64) * r).astype(np.float32)   # div.approx.ftz alone

    def twice(a, b):   # rounded, then flushed, as an .ftz add
        return flush((a.astype(np.float64) + b).astype(np.float32))

    expected = [fma(x[0], r[0], z[0]), fma(x[1], r[1], z[1]), fma(x[2], r[2], -z[2]), fma(-x[3], r[3], z[3]),
                (q[4].astype(np.float64) + 1e-5).astype(np.float32), fma(q[5], np.float32(1.5), z[5]),
                fma(x[6], r[6], z[6]), fma(-x[7], r[7], z[7]),
                fma(x[8], r[8], -flush(z[8] * np.float32(1.5))), fma(z[9], np.float32(1.5), q[9]),
                twice(q[10], z[10]), flush(q[10] * z[10])]
    for row, want in enumerate(expected):
        want = flush(want) if row not in (4, 10, 11) else want
        assert np.array_equal(out[row].view(np.uint32), np.asarray(want, np.float32).view(np.uint32)), row
    # not vacuous: one rounding differs from two on these operands
    assert (twice(q[0], z[0]).view(np.uint32) != out[0].view(np.uint32)).mean() > 0.05
    assert (flush(fma(x[10], r[10], z[10])).view(np.uint32) != out[10].view(np.uint32)).mean() > 0.05


def test_without_fast_math_the_quotient_is_rounded_first(rng):
    x, y, z = operands(rng)
    out = run(x, y, z, NO_FTZ)
    q = x / y
    for row, want in ((0, q[0] + z[0]), (2, q[2] - z[2]), (3, z[3] - q[3]), (6, z[6] + q[6]), (7, z[7] - q[7])):
        assert np.array_equal(out[row], want), row


@pytest.mark.gpu
def test_the_gpu_computes_the_same_bits(rng):
    x, y, z = operands(rng, 200000)
    cpu, gpu = run(x, y, z, FAST), run(x, y, z, FAST, "gpu")
    same = same_bits(cpu, gpu)
    assert same.all(), [(row, np.flatnonzero(~same[row])[:3]) for row in range(ROWS) if not same[row].all()]
