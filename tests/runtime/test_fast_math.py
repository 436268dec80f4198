"""--use_fast_math on the CPU runtime, as nvcc and NVRTC compile it (their PTX under the option):
float division is div.approx.ftz (what __fdividef is), expf is __expf, exp2f is ex2.approx.ftz,
sinf, cosf and sincosf are __sinf, __cosf and __sincosf. Without the option each keeps its precise
version. The fast versions' bits against an H100 are tests/runtime/test_gpu_math_tables.py's and
test_gpu_semantics.py's; here, that the option switches to them and only to them."""
import numpy as np
import pytest

import cudacheck

SOURCE = r'''
extern "C" __global__ void precise_or_fast(const float* a, const float* b, const double* d, float* o, double* od,
                                           int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s, c, q = a[i];
    sincosf(a[i], &s, &c);
    q /= b[i];
    float* r = o + 8 * i;
    r[0] = a[i] / b[i]; r[1] = q; r[2] = 1.0f / b[i]; r[3] = expf(a[i]); r[4] = exp2f(a[i]);
    r[5] = sinf(a[i]); r[6] = cosf(a[i]); r[7] = s + c;
    od[i] = d[i] / (double)b[i];                 // double division stays IEEE
}
extern "C" __global__ void intrinsics(const float* a, const float* b, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* r = o + 8 * i;
    r[0] = __fdividef(a[i], b[i]); r[1] = r[0]; r[2] = __fdividef(1.0f, b[i]); r[3] = __expf(a[i]);
    r[4] = 0.0f; r[5] = __sinf(a[i]); r[6] = __cosf(a[i]);
    r[7] = __sinf(a[i]) + __cosf(a[i]);
}
'''


def run(kernel, options, a, b, d):
    n = a.size
    o, od = np.zeros(8 * n, np.float32), np.zeros(n, np.float64)
    mod = cudacheck.RawModule(SOURCE, backend="cpu", options=options)
    args = (a, b, d, o, od, np.int32(n)) if kernel == "precise_or_fast" else (a, b, o, np.int32(n))
    mod.get_function(kernel)(((n + 127) // 128,), (128,), args)
    return o.reshape(n, 8).view(np.uint32), od


@pytest.fixture
def inputs(rng):
    n = 3000
    a = rng.uniform(-30, 30, n).astype(np.float32)
    b = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-20, 20, n)).astype(np.float32)
    return a, b, rng.standard_normal(n)


def test_fast_math_compiles_division_and_the_exponentials_and_sines_to_their_intrinsics(inputs):
    a, b, d = inputs
    fast, fast_d = run("precise_or_fast", ("--use_fast_math",), a, b, d)
    intrinsic, _ = run("intrinsics", (), a, b, d)
    same = fast == intrinsic
    for col, name in enumerate(["a / b", "a /= b", "1.0f / b", "expf", "exp2f", "sinf", "cosf", "sincosf"]):
        if name != "exp2f":   # (no intrinsic of its own: the next test)
            assert same[:, col].all(), (name, np.flatnonzero(~same[:, col])[:5])
    np.testing.assert_array_equal(fast_d, d / b.astype(np.float64))


def test_exp2f_under_fast_math_is_ex2_approx_ftz(inputs):
    """CUDA's exp2f is ex2.approx alone, with the option or without; the option adds .ftz: the
    same bits where the result is normal, zero where it would be subnormal (x below -126); within
    2 ulp of 2^x."""
    a, b, d = inputs
    a = np.concatenate([a, np.linspace(-149, -126.5, 200, dtype=np.float32)])
    b, d = np.resize(b, a.size), np.resize(d, a.size)
    fast, _ = run("precise_or_fast", ("-use_fast_math",), a, b, d)
    precise, _ = run("precise_or_fast", ("-ftz=false",), a, b, d)   # CuPy's default flushes too
    normal = a >= -126
    assert (fast[normal, 4] == precise[normal, 4]).all()
    assert (fast[~normal, 4] == 0).all() and (precise[~normal, 4] != 0).all()
    got, exact = fast[normal, 4].view(np.float32), np.exp2(a[normal].astype(np.float64))
    ulps = np.abs(got - exact) / np.spacing(exact.astype(np.float32))
    assert ulps.max() <= 2


def test_without_fast_math_each_keeps_its_precise_version(inputs):
    a, b, d = inputs
    precise, _ = run("precise_or_fast", (), a, b, d)
    values = precise.view(np.float32)
    np.testing.assert_array_equal(values[:, 0], a / b)      # IEEE division, as div.rn
    np.testing.assert_array_equal(values[:, 1], a / b)
    intrinsic, _ = run("intrinsics", (), a, b, d)
    assert (precise[:, 0] != intrinsic[:, 0]).any() and (precise[:, 5] != intrinsic[:, 5]).any()
