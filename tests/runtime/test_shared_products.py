"""A product nvcc computes once, because it is written twice (its optimizer merges the two), is
fused into a sum or difference only where every use of it is one (frontend/shared_products.py).
Each case below is what the machine code of nvcc 13.0 for sm_90 does (cuobjdump -sass of the same
kernel: logs/2026-12-07-cse-contraction.md): FFMA where fused, FMUL then FADD where not. The CPU
runtime is held to a NumPy model of each: fma(x, y, c) rounded once, or x * y rounded and then
added."""
import numpy as np
import pytest

from tests.support.gpu_float_model import fma, run_packed, same_bits

KERNELS = r'''
#define ARGS const float* __restrict__ a, float* __restrict__ o, int n
#define LOAD int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
    float x = a[4 * i], y = a[4 * i + 1], c = a[4 * i + 2], d = a[4 * i + 3]; o += 2 * i;
extern "C" __global__ void sub_and_divisor(ARGS) { LOAD o[0] = c - x * y; o[1] = __fdividef(d, x * y); }
extern "C" __global__ void add_and_divisor(ARGS) { LOAD o[0] = c + x * y; o[1] = __fdividef(d, x * y); }
extern "C" __global__ void two_sums(ARGS) { LOAD o[0] = c + x * y; o[1] = d - x * y; }
extern "C" __global__ void sub_and_factor(ARGS) { LOAD o[0] = c - x * y; o[1] = d * (x * y); }
extern "C" __global__ void add_and_store(ARGS) { LOAD o[0] = c + x * y; o[1] = x * y; }
extern "C" __global__ void literal(ARGS) { LOAD o[0] = c + x * 0.3f; o[1] = x * 0.3f; }
extern "C" __global__ void commuted(ARGS) { LOAD o[0] = c - x * y; o[1] = __fdividef(d, y * x); }
extern "C" __global__ void hoisted(ARGS) { LOAD if (d > 0) o[1] = __fdividef(d, x * y); o[0] = c - x * y; }
extern "C" __global__ void both_arms(ARGS) { LOAD if (d > 0) o[0] = c - x * y; else o[1] = __fdividef(d, x * y); }
extern "C" __global__ void written_between(ARGS) { LOAD o[1] = __fdividef(d, x * y); x = x + 1.0f; o[0] = c - x * y; }
extern "C" __global__ void local_sum(ARGS) { LOAD float p = x * y; o[1] = d + p; o[0] = c - x * y; }
extern "C" __global__ void local_divisor(ARGS) { LOAD float p = x * y; o[1] = __fdividef(d, p); o[0] = c - x * y; }
'''
UNFUSED = {"sub_and_divisor", "add_and_divisor", "sub_and_factor", "add_and_store", "literal", "commuted", "hoisted",
           "both_arms", "local_divisor"}
FUSED = {"two_sums", "written_between", "local_sum"}


def operands(kernel, a):
    """The x and y the kernel's product multiplies."""
    x, y = a[:, 0], a[:, 1]
    if kernel == "literal":
        y = np.full_like(x, np.float32(0.3))
    if kernel == "written_between":
        x = (x + np.float32(1)).astype(np.float32)
    return x, y


def inputs(kernel, rng, n):
    a = (rng.choice([-1.0, 1.0], (n, 4)) * 2.0 ** rng.uniform(-20, 20, (n, 4))).astype(np.float32)
    # c close to -x*y (x*y for a difference): where one rounding and two differ most
    x, y = operands(kernel, a)
    sign = 1 if negated(kernel) else -1
    a[:, 2] = (x.astype(np.float64) * y).astype(np.float32) * np.float32(1 + 2.0 ** -19) * sign
    return a


def negated(kernel):
    """Whether the kernel's o[0] is c - x*y (else c + x*y)."""
    return kernel not in ("add_and_divisor", "two_sums", "add_and_store", "literal")


def run(kernel, a, backend="cpu"):
    return run_packed(KERNELS, kernel, a, 2, backend=backend)


@pytest.mark.parametrize("kernel", sorted(UNFUSED | FUSED))
def test_a_shared_product_is_fused_only_where_every_use_is_a_sum(kernel, rng):
    a = inputs(kernel, rng, 3000)
    (x, y), c, negate = operands(kernel, a), a[:, 2], negated(kernel)
    fused = fma(-x if negate else x, y, c)
    rounded = (c.astype(np.float64) + (-1 if negate else 1) * (x * y).astype(np.float32)).astype(np.float32)
    got = run(kernel, a)[:, 0]
    want = fused if kernel in FUSED else rounded
    if kernel == "both_arms":   # only the rows whose d > 0 took the difference
        got, want, fused, rounded = (v[a[:, 3] > 0] for v in (got, want, fused, rounded))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), kernel
    assert (fused.view(np.uint32) != rounded.view(np.uint32)).mean() > 0.2   # the two differ here


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(UNFUSED | FUSED))
def test_the_gpu_computes_the_same_bits(kernel, rng):
    a = inputs(kernel, rng, 100000)
    cpu, gpu = run(kernel, a), run(kernel, a, "gpu")
    same = same_bits(cpu, gpu)
    assert same.all(), (kernel, np.flatnonzero(~same.all(axis=1))[:5])
