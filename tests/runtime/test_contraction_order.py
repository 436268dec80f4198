"""Which product of `p*q + r*s` the CPU runtime fuses: the one nvcc fuses (frontend/ranks.py).

nvcc's optimizer orders a sum's operands by rank and code generation fuses the first product,
unless the other one was hoisted out of the loop the sum is in. Each kernel here has sums whose
right product nvcc fuses and sums whose left one it fuses (nvcc 13.0's PTX, read by
scripts/contraction_rank_probe.py); the CPU runtime's results are held bit for bit to an exact
model of the fma nvcc forms, on fresh random operands chosen so that fma(p, q, RN(r*s)) and
fma(r, s, RN(p*q)) differ. With nvcc on PATH, the probe holds the front end's choice to nvcc's
PTX on these kernels and on fresh random ones."""
import shutil

import contraction_rank_probe as probe
import numpy as np
import pytest

import cudacheck
from tests.support.numerics import fma_exact32

# SGEMM_CUDA's float4 epilogue: the vector load's lanes rank alike, R's loads come one after
# another, so lane x's products tie (the left one, a*R[0], is fused) and every later lane's
# a*R[k] ranks above b*t (the right one is fused).
EPILOGUE = r'''extern "C" __global__ void epilogue(float* C, const float* R, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 t = reinterpret_cast<float4*>(C)[i];
    t.x = a * R[4 * i] + b * t.x;
    t.y = a * R[4 * i + 1] + b * t.y;
    t.z = a * R[4 * i + 2] + b * t.z;
    t.w = a * R[4 * i + 3] + b * t.w;
    reinterpret_cast<float4*>(C)[i] = t;
}
'''
EPILOGUE_RIGHT = [False, True, True, True]   # per lane: whether the right product is fused

# In a loop that stores, x*s (both computed before it) is hoisted out of the loop and R[j]*u
# is fused wherever it is written; a sum of two loads' products keeps the rank order: the
# later-loaded product is the addend.
LOOP = r'''extern "C" __global__ void loop(float* out, const float* R, const float* X, float s, float u, int n) {
    float x = X[threadIdx.x];
    for (int j = 0; j < n; ++j) {
        out[3 * j] = x * s + R[j] * u;
        out[3 * j + 1] = R[j] * u + x * s;
        out[3 * j + 2] = X[n + j] * s + R[j] * u;
    }
}
'''
LOOP_RIGHT = [True, False, False]


def _expected(p, q, r, s, right):
    """p*q + r*s as nvcc computes it: one product fused, the other rounded first."""
    return fma_exact32(r, s, p * q) if right else fma_exact32(p, q, r * s)


def test_the_float4_epilogue_fuses_what_nvcc_fuses_lane_by_lane():
    rng = np.random.default_rng()
    n = 300
    a, b = np.float32(rng.uniform(0.5, 2)), np.float32(rng.uniform(0.5, 2))
    # per lane k: a*R[4i+k] + b*C[4i+k] nearly cancelling
    R = rng.uniform(-4, 4, 4 * n).astype(np.float32)
    C = (-(a * R.astype(np.float64)) / b * (1 + rng.uniform(-1e-6, 1e-6, 4 * n))).astype(np.float32)
    got = C.copy()
    cudacheck.RawKernel(EPILOGUE, "epilogue", backend="cpu")((3,), (128,), (got, R, a, b, np.int32(n)))
    for lane, right in enumerate(EPILOGUE_RIGHT):
        k = slice(lane, None, 4)
        av, bv = np.full(n, a, np.float32), np.full(n, b, np.float32)
        want = _expected(av, R[k], bv, C[k], right)
        other = _expected(av, R[k], bv, C[k], not right)
        assert np.array_equal(got[k], want), lane
        assert (want != other).mean() > 0.3, lane   # the inputs tell the two fusions apart


def test_a_product_hoisted_out_of_a_loop_leaves_the_other_fused():
    rng = np.random.default_rng()
    n = 200
    x, sv, u = (np.float32(rng.uniform(0.5, 2) * rng.choice([-1, 1])) for _ in range(3))
    # R[j]*u cancels x*s, and X[n + j]*s cancels R[j]*u, to a millionth
    R = (-(np.float64(x) * sv) / u * (1 + rng.uniform(-1e-6, 1e-6, n))).astype(np.float32)
    X = np.zeros(2 * n, np.float32)
    X[0] = x
    X[n:] = (-(R.astype(np.float64) * u) / sv * (1 + rng.uniform(-1e-6, 1e-6, n))).astype(np.float32)
    out = np.zeros(3 * n, np.float32)
    cudacheck.RawKernel(LOOP, "loop", backend="cpu")((1,), (1,), (out, R, X, sv, u, np.int32(n)))
    xs, ss, us = (np.full(n, v, np.float32) for v in (x, sv, u))
    for k, ((p, q, r, s), right) in enumerate(zip([(xs, ss, R, us), (R, us, xs, ss), (X[n:], ss, R, us)],
                                                   LOOP_RIGHT)):
        want = _expected(p, q, r, s, right)
        assert np.array_equal(out[k::3], want), k
        assert (want != _expected(p, q, r, s, not right)).mean() > 0.3, k


# A recursive device function (nvcc calls it, it is not inlined) before the sum: the model
# follows the call without looping, and t.y, loaded first, is the fused product's (nvcc 13.0's
# PTX: fma(t.y, b, a * R[...])).
RECURSIVE = r'''__device__ float tail(const float* a, int k) { return k == 0 ? a[0] : tail(a, k - 1) * 0.5f; }
extern "C" __global__ void recursive(float* o, const float* R, float a, float b) {
    int i = threadIdx.x;
    float4 t = reinterpret_cast<const float4*>(R)[i];
    o[2 * i] = tail(R, i % 3);
    o[2 * i + 1] = a * R[4 * blockDim.x + i] + b * t.y;
}
'''


def test_a_recursive_device_function_beside_the_sum():
    rng = np.random.default_rng()
    n = 128
    a, b = np.float32(rng.uniform(0.5, 2)), np.float32(rng.uniform(0.5, 2))
    R = rng.uniform(-4, 4, 5 * n).astype(np.float32)
    ty = R[1:4 * n:4]
    R[4 * n:] = (-(b * ty.astype(np.float64)) / a * (1 + rng.uniform(-1e-6, 1e-6, n))).astype(np.float32)
    o = np.zeros(2 * n, np.float32)
    cudacheck.RawKernel(RECURSIVE, "recursive", backend="cpu")((1,), (n,), (o, R, a, b))
    av, bv = np.full(n, a, np.float32), np.full(n, b, np.float32)
    want = _expected(av, R[4 * n:], bv, ty, right=True)
    assert np.array_equal(o[1::2], want)
    assert (want != _expected(av, R[4 * n:], bv, ty, right=False)).mean() > 0.3
    assert np.array_equal(o[0::2], [R[0] * np.float32(0.5) ** (i % 3) for i in range(n)])


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


@needs_nvcc
def test_these_kernels_choices_are_nvccs(tmp_path):
    for name, source, right in [("epilogue", EPILOGUE, EPILOGUE_RIGHT), ("loop", LOOP, LOOP_RIGHT)]:
        path = tmp_path / f"{name}.cu"
        path.write_text(source)
        tally, rows = probe.probe_file(path)
        assert [side == "right" for _, _, side, _ in rows] == right, rows
        assert tally["agree"] == len(right) and not tally["differ"], tally


@needs_nvcc
def test_random_kernels_choices_are_mostly_nvccs():
    """Fresh random kernels (products of parameters, global, shared and vector loads, locals,
    values from ifs and loops, inlined device functions, math functions): the front end's choice
    is nvcc's in nearly every sum (98.2% over 600 kernels, logs/2026-12-07-contraction-rank.md)."""
    seed = int(np.random.default_rng().integers(1 << 30))
    tally, _, misses, _ = probe.probe(12, seed, statements=12)
    decided = tally["agree"] + tally["differ"]
    assert decided >= 30, (seed, tally)
    assert tally["agree"] >= 0.9 * decided, (seed, misses[:5])
