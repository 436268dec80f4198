"""--use_fast_math on the CPU runtime, as nvcc and NVRTC compile it (their PTX under the option):
float division is div.approx.ftz (what __fdividef is), expf is __expf, exp2f is ex2.approx.ftz,
sinf, cosf and sincosf are __sinf, __cosf and __sincosf. Without the option each keeps its precise
version. The fast versions' bits against an H100 are tests/runtime/test_gpu_math_tables.py's and
test_gpu_semantics.py's; here, that the option switches to them and only to them."""
import numpy as np
import pytest

import cudacheck
from tests.support import gpu_float_model as gm
from tests.support.gpu_float_model import NO_FTZ

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
    precise, _ = run("precise_or_fast", NO_FTZ, a, b, d)   # unflushed: CuPy's -ftz=true flushes too
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


# __expf of these is subnormal: ex2.approx of x * log2(e), from 2^-127 down to 2^-148.
SUBNORMAL_EXP = np.linspace(-88.5, -102.5, 29, dtype=np.float32)
PROGRAM = r'''
#include <cstdio>
__global__ void k(float* o, const float* x, int n) { int i = threadIdx.x; if (i < n) o[i] = __expf(x[i]); }
int main() {
    const int n = %d;
    float x[n] = {%s}, h[n], *dx, *dout;
    cudaMalloc(&dx, sizeof x); cudaMalloc(&dout, sizeof h);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    k<<<1, 32>>>(dout, dx, n);
    cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) printf("%%a\n", h[i]);
}
''' % (SUBNORMAL_EXP.size, ", ".join(f"{float(v).hex()}f" for v in SUBNORMAL_EXP))


def _program_exp(backend, options=()):
    run = cudacheck.run_program(PROGRAM, backend=backend, options=options)
    assert run.exit_code == 0, run.stderr
    return np.array([float.fromhex(w) for w in run.stdout.split()], np.float32)


@pytest.mark.parametrize("options", [(), ("-ftz=false",), ("-ftz=true",)])
def test_a_raw_module_flushes_subnormals_whatever_its_ftz_says(options):
    """CuPy appends -ftz=true to a kernel's options and NVRTC takes the last: through CuPy a
    GPU flushes every __expf result below 2^-126 to zero, and so does the CPU runtime."""
    n = SUBNORMAL_EXP.size
    o = np.zeros(n, np.float32)
    cudacheck.RawKernel('extern "C" __global__ void k(float* o, const float* x, int n) '
                        '{ int i = threadIdx.x; if (i < n) o[i] = __expf(x[i]); }', "k", backend="cpu",
                        options=options)((1,), (32,), (o, SUBNORMAL_EXP, np.int32(n)))
    assert (o == 0).all()


def test_a_whole_program_keeps_subnormals_unless_asked_as_nvcc_does():
    unflushed = _program_exp("cpu")
    log2e = np.uint32(0x3FB8AA3B).view(np.float32)   # log2(e) as nvcc's PTX multiplies by it
    want = gm.ex2_approx(gm.decoded_tables(), (SUBNORMAL_EXP * log2e).astype(np.float32), False)
    assert gm.same_bits(unflushed, want).all() and (unflushed != 0).all()
    assert (_program_exp("cpu", ("-ftz=true",)) == 0).all()
    assert (_program_exp("cpu", ("--use_fast_math",)) == 0).all()


@pytest.mark.gpu(nvcc=True)
def test_a_whole_program_keeps_subnormals_on_a_gpu_too():
    assert gm.same_bits(_program_exp("gpu"), _program_exp("cpu")).all()
    assert (_program_exp("gpu", ("-ftz=true",)) == 0).all()
