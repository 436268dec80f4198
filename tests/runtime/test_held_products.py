"""A product kept in a local variable (`float p = x * y; ... p + c`) is fused with the sums that
read it there, as nvcc fuses it, and left apart where nvcc leaves it apart (frontend/ranks.py's
product uses, arith.py's holders). Each kernel below is a case whose machine code nvcc 13.0 gives
for sm_90 (cuobjdump -sass of the same source, and an H100 through CuPy:
logs/2026-12-07-held-products.md): a product is fused into every one of its uses where all of
them are sums in its block, or in one block only its block leads to (an if's), in the loops the
product varies in, with none of a few math functions between (their selects become branches
after the sinking); not after a join (after_branch, after_logf: there nvcc fuses in some kernels
and not in others, and not in these). The CPU runtime is held to a NumPy model of each output:
fma(x, y, c) rounded once, or x * y rounded and then added."""
import numpy as np
import pytest

from tests.support.gpu_float_model import decoded_tables, flush, fma, rcp_approx_ftz, run_packed, same_bits

KERNELS = r'''
#define ARGS const float* __restrict__ a, float* __restrict__ o, int n, int m
#define LOAD int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
    float x = a[4 * i], y = a[4 * i + 1], c = a[4 * i + 2], d = a[4 * i + 3]; o += 3 * i;
extern "C" __global__ void sum(ARGS) { LOAD float p = x * y; o[0] = p + c; }
extern "C" __global__ void subtracted(ARGS) { LOAD float p = x * y; o[0] = c - p; }
extern "C" __global__ void minus_addend(ARGS) { LOAD float p = x * y; o[0] = p - c; }
extern "C" __global__ void negated(ARGS) { LOAD float p = x * y; o[0] = -p + c; }
extern "C" __global__ void two_sums(ARGS) { LOAD float p = x * y; o[0] = p + c; o[1] = p + d; }
extern "C" __global__ void and_stored(ARGS) { LOAD float p = x * y; o[0] = p + c; o[1] = p; }
extern "C" __global__ void in_branch(ARGS) { LOAD float p = x * y; if (d > 0) o[0] = p + c; }
extern "C" __global__ void in_branch_and_after(ARGS) { LOAD float p = x * y; if (d > 0) o[1] = p + d; o[0] = p + c; }
extern "C" __global__ void after_branch(ARGS) { LOAD float p = x * y; if (d > 0) o[1] = d; o[0] = p + c; }
extern "C" __global__ void before_and_after_branch(ARGS) { LOAD
    float p = x * y; o[0] = p + c; if (d > 0) o[2] = d; o[1] = p + d; }
extern "C" __global__ void copied(ARGS) { LOAD float p = x * y; float q = p; o[0] = q + c; }
extern "C" __global__ void multiplied_in_place(ARGS) { LOAD float p = x; p *= y; o[0] = p + c; }
extern "C" __global__ void redefined(ARGS) { LOAD float p = x * y; o[0] = p + c; p = c * d; o[1] = p + x; }
extern "C" __global__ void first_of_two(ARGS) { LOAD float p = x * y; float q = c * d; o[0] = q + p; }
extern "C" __global__ void left_of_difference(ARGS) { LOAD float q = c * d; float p = x * y; o[0] = p - q; }
extern "C" __global__ void either_branch(ARGS) { LOAD float p; if (d > 0) p = x * y; else p = c * d; o[0] = p + c; }
extern "C" __global__ void selected(ARGS) { LOAD float p = x * y; float q = d > 0 ? p : d; o[0] = q + c; }
extern "C" __global__ void summed_in_loop(ARGS) { LOAD
    float p = x * y; float s = c; for (int j = 0; j < m; j++) s += p; o[0] = s; }
extern "C" __global__ void invariant_in_loop(ARGS) { LOAD
    float s = c; for (int j = 0; j < m; j++) s += x * y; o[0] = s; }
extern "C" __global__ void sum_hoisted_with_it(ARGS) { LOAD float p = x * y; for (int j = 0; j < m; j++) o[0] = p + c; }
extern "C" __global__ void after_sinf(ARGS) { LOAD float p = x * y; o[1] = sinf(d); o[0] = sinf(d) + p; }
extern "C" __global__ void before_sinf(ARGS) { LOAD o[1] = sinf(d); o[0] = x * y + sinf(d); }
extern "C" __global__ void after_logf(ARGS) { LOAD float p = x * y; o[1] = logf(fabsf(d)); o[0] = logf(fabsf(d)) + p; }
extern "C" __global__ void quotient(ARGS) { LOAD float v = x / y; o[0] = v + c; }
extern "C" __global__ void divided_in_place(ARGS) { LOAD float v = x; v /= y; o[0] = v + c; }
'''
LOOPS = 3   # m: the loops' count of iterations

# kernel -> its outputs: (column, the sum's form, fused); the form is the product's sign, the
# addend's sign, the addend's column of the inputs (x y c d) or of the outputs ("o1").
CASES = {
    "sum": [(0, (+1, +1, 2), True)],
    "subtracted": [(0, (-1, +1, 2), True)],
    "minus_addend": [(0, (+1, -1, 2), True)],
    "negated": [(0, (-1, +1, 2), True)],
    "two_sums": [(0, (+1, +1, 2), True), (1, (+1, +1, 3), True)],
    "and_stored": [(0, (+1, +1, 2), False)],
    "in_branch": [(0, (+1, +1, 2), True)],
    "in_branch_and_after": [(0, (+1, +1, 2), False), (1, (+1, +1, 3), False)],
    "after_branch": [(0, (+1, +1, 2), False)],
    "before_and_after_branch": [(0, (+1, +1, 2), False), (1, (+1, +1, 3), False)],
    "copied": [(0, (+1, +1, 2), True)],
    "multiplied_in_place": [(0, (+1, +1, 2), True)],
    "redefined": [(0, (+1, +1, 2), True)],
    "first_of_two": [(0, (+1, +1, "cd"), True)],
    "left_of_difference": [(0, (+1, -1, "cd"), True)],
    "either_branch": [(0, (+1, +1, 2), False)],
    "selected": [(0, (+1, +1, 2), False)],
    "sum_hoisted_with_it": [(0, (+1, +1, 2), True)],
    "after_sinf": [(0, (+1, +1, "o1"), False)],
    "before_sinf": [(0, (+1, +1, "o1"), False)],
    "after_logf": [(0, (+1, +1, "o1"), False)],
}
LOOPED = {"summed_in_loop", "invariant_in_loop"}   # s = c, then s += x * y rounded, LOOPS times
QUOTIENTS = {"quotient", "divided_in_place"}       # --use_fast_math: fma(x, rcp.approx.ftz(y), c)
BRANCHED = {"in_branch", "in_branch_and_after", "either_branch", "selected"}   # rows whose d > 0 only


def inputs(kernel, rng, n):
    """x, y, c, d of each row: the addend close to -x*y or to x*y, where one rounding and two
    differ most (of sinf(d) and logf(|d|), y chosen so)."""
    a = (rng.choice([-1.0, 1.0], (n, 4)) * 2.0 ** rng.uniform(-20, 20, (n, 4))).astype(np.float32)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    a[:, 2] = sign * (a[:, 0].astype(np.float64) * a[:, 1]).astype(np.float32) * np.float32(1 + 2.0 ** -19)
    if kernel in ("after_sinf", "before_sinf", "after_logf"):
        a[:, 3] = rng.uniform(0.5, 3.0, n).astype(np.float32)
        f = np.sin(a[:, 3].astype(np.float64)) if "sinf" in kernel else np.log(a[:, 3].astype(np.float64))
        a[:, 1] = (sign * f * (1 + 2.0 ** -19) / a[:, 0]).astype(np.float32)
    return a


def run(kernel, a, backend="cpu"):
    options = ("--use_fast_math",) if kernel in QUOTIENTS else ()
    return run_packed(KERNELS, kernel, a, 3, options, (np.int32(LOOPS),), backend)


def model(kernel, a, out):
    """{column: (what nvcc computes, the other way)} of the kernel's outputs."""
    x, y, c, d = a.T
    f32 = np.float32
    if kernel in LOOPED:
        rounded, s = (x * y).astype(f32), c.copy()
        for _ in range(LOOPS):
            s = (s + rounded).astype(f32)
        return {0: (s, fma(x, y, c))}   # (nvcc hoists x * y out of the loop, away from the sum)
    if kernel in QUOTIENTS:
        x, c = flush(x), flush(c)
        rcp = rcp_approx_ftz(decoded_tables(), y)
        return {0: (flush(fma(x, rcp, c)), flush((flush((x * rcp).astype(f32)) + c).astype(f32)))}
    found = {}
    for column, (sign_p, sign_c, addend), fused in CASES[kernel]:
        if kernel == "redefined" and column == 1:
            x, y = c, d
        if addend == "cd":   # the other product, rounded on its own
            z = (c.astype(np.float64) * d).astype(f32)
        else:
            z = out[:, 1] if addend == "o1" else a[:, addend]
        if kernel == "redefined" and column == 1:
            z = a[:, 0]
        product = (sign_p * x.astype(np.float64) * y).astype(f32)
        one = fma(sign_p * x, y, sign_c * z)
        two = (product + sign_c * z.astype(np.float64)).astype(f32)
        found[column] = (one, two) if fused else (two, one)
    return found


ALL = sorted(set(CASES) | LOOPED | QUOTIENTS)


@pytest.mark.parametrize("kernel", ALL)
def test_a_product_in_a_local_is_fused_where_nvcc_fuses_it(kernel, rng):
    a = inputs(kernel, rng, 3000)
    out = run(kernel, a)
    rows = a[:, 3] > 0 if kernel in BRANCHED else slice(None)
    for column, (want, other) in model(kernel, a, out).items():
        got, want, other = out[rows, column], want[rows], other[rows]
        assert same_bits(got, want).all(), (kernel, column, np.flatnonzero(~same_bits(got, want))[:5])
        if column == 0:
            assert (~same_bits(want, other)).mean() > 0.05, kernel   # the two ways differ here


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ALL)
def test_the_gpu_computes_the_same_bits(kernel, rng):
    a = inputs(kernel, rng, 100000)
    cpu, gpu = run(kernel, a), run(kernel, a, "gpu")
    if kernel in BRANCHED:
        cpu, gpu = cpu[a[:, 3] > 0], gpu[a[:, 3] > 0]
    same = same_bits(cpu, gpu)
    assert same.all(), (kernel, np.flatnonzero(~same.all(axis=1))[:5])
