"""--use_fast_math's `a / b + c`: ptxas fuses div.approx.ftz's multiply by the reciprocal with the
add, so the GPU computes fma(a, rcp.approx.ftz(b), c), one rounding (an H100, for every pair it
was given: logs/2026-12-07-h100-lg2-table.md), not the quotient rounded and then the sum. The
CPU runtime does the same in one expression, for each order and sign, and in `s += a / b` and
`s -= a / b`; of `a / b - c * d` the quotient, of `a / b + c * d` the product (cuobjdump of nvcc
13.0's code); a sum in double, or a build without fast math, keeps the quotient rounded first."""
import lzma

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath
from tests.support.gpu_float_model import flush, fma, rcp_approx_ftz

KERNEL = r'''
extern "C" __global__ void sums(const float* x, const float* y, const float* z, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i];
    o[i] = a / b + c;
    o[n + i] = c + a / b;
    o[2 * n + i] = a / b - c;
    o[3 * n + i] = c - (a / b);
    o[4 * n + i] = a / b + 1e-5;            // a double sum: the quotient is rounded first
    o[5 * n + i] = (a / b) * 1.0f + c;      // a product's sum: the product is what is fused
    float s = c, t = c;
    s += a / b;
    t -= (a / b);
    o[6 * n + i] = s;
    o[7 * n + i] = t;
    o[8 * n + i] = a / b - c * 1.5f;        // a difference fuses its left operand: the quotient
    o[9 * n + i] = a / b + c * 1.5f;        // a sum its product (NVVM fuses it before ptxas runs)
}'''
ROWS = 10
FAST = ("--use_fast_math",)


def run(x, y, z, options, backend="cpu"):
    n = x.size
    if backend == "gpu":
        import cupy
        o = cupy.zeros(ROWS * n, cupy.float32)
        cudacheck.RawModule(KERNEL, backend="gpu", options=options).get_function("sums")(
            ((n + 255) // 256,), (256,), (cupy.asarray(x), cupy.asarray(y), cupy.asarray(z), o, np.int32(n)))
        return cupy.asnumpy(o).reshape(ROWS, n)
    o = np.zeros(ROWS * n, np.float32)
    cudacheck.RawModule(KERNEL, backend="cpu", options=options).get_function("sums")(
        ((n + 255) // 256,), (256,), (x, y, z, o, np.int32(n)))
    return o.reshape(ROWS, n)


def operands(rng, n=20000):
    """Quotients and addends of every size, many nearly cancelling (where one rounding and two
    differ most), and divisors past 2^126 (whose reciprocal flushes to zero)."""
    x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    y = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    z = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    near = n // 2
    z[:near] = -(x[:near].astype(np.float64) / y[:near]).astype(np.float32) * np.float32(1 + 2.0 ** -20)
    y[near:near + 50] = np.float32(2.0 ** 127)
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
    quotient = flush(x.astype(np.float64) * r).astype(np.float32)   # div.approx.ftz alone
    expected = [flush(fma(x, r, z)), flush(fma(x, r, z)), flush(fma(x, r, -z)), flush(fma(-x, r, z)),
                (quotient.astype(np.float64) + 1e-5).astype(np.float32), flush(fma(quotient, np.float32(1), z)),
                flush(fma(x, r, z)), flush(fma(-x, r, z)),
                flush(fma(x, r, -flush(z * np.float32(1.5)))), flush(fma(z, np.float32(1.5), quotient))]
    for row, want in enumerate(expected):
        assert np.array_equal(out[row].view(np.uint32), np.asarray(want, np.float32).view(np.uint32)), row
    # not vacuous: one rounding differs from two on these operands
    twice = flush(flush(quotient.astype(np.float64) + z).astype(np.float32))
    assert (twice.view(np.uint32) != out[0].view(np.uint32)).mean() > 0.05


def test_without_fast_math_the_quotient_is_rounded_first(rng):
    x, y, z = operands(rng)
    out = run(x, y, z, ("-ftz=false",))
    q = x / y
    assert np.array_equal(out[0], q + z) and np.array_equal(out[2], q - z) and np.array_equal(out[3], z - q)
    assert np.array_equal(out[6], z + q) and np.array_equal(out[7], z - q)


@pytest.mark.gpu
def test_the_gpu_computes_the_same_bits(rng):
    x, y, z = operands(rng, 200000)
    cpu, gpu = run(x, y, z, FAST), run(x, y, z, FAST, "gpu")
    same = (cpu.view(np.uint32) == gpu.view(np.uint32)) | (np.isnan(cpu) & np.isnan(gpu))
    assert same.all(), [(row, x[~same[row]][:3], y[~same[row]][:3], z[~same[row]][:3])
                        for row in range(ROWS) if not same[row].all()]
