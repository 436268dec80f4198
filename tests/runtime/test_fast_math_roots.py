"""--use_fast_math's square roots, as nvcc 13.0's PTX computes them: sqrtf is sqrt.approx.ftz,
`1 / sqrtf(x)` (the literal 1, a float quotient) one rsqrt.approx.ftz of x, and any other
quotient of a root div.approx.ftz of sqrt.approx.ftz; the instructions' bits are the tables an
H100 measured (cudacheck/cpu/gpumath.py), compared here with a NumPy model of the lookup.
Without the option sqrtf stays sqrt.rn."""
import numpy as np
import pytest

import cudacheck
from tests.support.gpu_float_model import (
    NO_FTZ,
    decoded_tables,
    flush,
    rcp_approx_ftz,
    rsqrt_approx_ftz,
    same_bits,
    sqrt_approx,
)

SOURCE = r'''
extern "C" __global__ void roots(const float* x, const float* y, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* r = o + 6 * i;
    r[0] = sqrtf(x[i]);
    r[1] = 1.0f / sqrtf(x[i]);
    r[2] = 1 / (sqrt(x[i]));          // the float overload, an int literal, parentheses
    r[3] = y[i] / sqrtf(x[i]);
    r[4] = 1.0f / sqrtf(x[i]) + y[i];  // rsqrt, then an add: nothing to fuse
    r[5] = 2.0f / sqrtf(x[i]);
}
'''


@pytest.fixture(scope="module")
def tables():
    return decoded_tables()


def run(options, x, y, backend="cpu"):
    xp = np
    if backend == "gpu":
        import cupy as xp
    o = xp.zeros(6 * x.size, xp.float32)
    cudacheck.RawKernel(SOURCE, "roots", backend=backend, options=options)(
        ((x.size + 127) // 128,), (128,), (xp.asarray(x), xp.asarray(y), o, np.int32(x.size)))
    return (o if xp is np else xp.asnumpy(o)).reshape(-1, 6)


@pytest.fixture
def inputs(rng):
    n = 4000
    x = (2.0 ** rng.uniform(-149, 128, n)).astype(np.float32)   # subnormal to huge
    x[:6] = [0.0, -0.0, np.inf, -1.0, np.nan, 2.0 ** -140]
    y = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    return x, y


def same(got, want):
    return same_bits(got, want).all()


def test_fast_math_roots_are_sqrt_approx_and_rsqrt_approx(tables, inputs):
    x, y = inputs
    got = run(("--use_fast_math",), x, y)
    root, recip = sqrt_approx(tables, x, ftz=True), rsqrt_approx_ftz(tables, x)

    def div(a, b):   # div.approx.ftz: a times rcp.approx.ftz(b), rounded once, flushed
        with np.errstate(over="ignore", invalid="ignore"):
            return flush((flush(a) * rcp_approx_ftz(tables, b)).astype(np.float32))

    for col, want in ((0, root), (1, recip), (2, recip), (3, div(y, root)), (4, (recip + y).astype(np.float32)),
                      (5, div(np.float32(2), root))):
        assert same(got[:, col], want), (col, np.flatnonzero(got[:, col].view(np.uint32) != want.view(np.uint32))[:5])
    # the instructions differ: most 1 / sqrtf(x) are not the quotient of the rounded root
    assert (got[:, 1].view(np.uint32) != div(np.float32(1), root).view(np.uint32)).mean() > 0.1


def test_sqrt_approx_is_within_the_guides_bound_and_not_sqrt_rn(tables, inputs):
    """sqrt.approx, read by its rule (subnormal arguments without .ftz through x 2^24 too), is within
    a relative 2^-22 of the square root, and is not sqrt.rn."""
    x, _ = inputs
    ok = np.isfinite(x) & (x > 0)
    v = sqrt_approx(tables, x, ftz=False)[ok].astype(np.float64)
    exact = np.sqrt(x[ok].astype(np.float64))
    assert (np.abs(v / exact - 1) <= 2.0 ** -22).all()
    assert (v != np.sqrt(x[ok]).astype(np.float64)).any()


def test_without_fast_math_sqrtf_is_sqrt_rn(inputs):
    x, y = inputs
    got = run(NO_FTZ, x, y)
    with np.errstate(invalid="ignore"):
        want = np.sqrt(x)
    assert same(got[:, 0], want)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [("--use_fast_math",), ()], ids=["fast-math", "default"])
def test_the_gpu_computes_the_same_bits(inputs, options):
    x, y = inputs
    cpu, gpu = run(options, x, y), run(options, x, y, "gpu")
    for col in range(cpu.shape[1]):
        assert same(cpu[:, col], gpu[:, col]), (col, x[cpu[:, col].view(np.uint32) != gpu[:, col].view(np.uint32)][:5])
