"""The CPU runtime computes what an H100 computed, bit for bit, where C++ on a CPU would
compute something else: float to integer conversion out of range, shifts by the width or
more, a*b + c contracted into one fused multiply-add (and not, under --fmad=false),
__activemask in divergent code, expf, tanhf, logf, log1pf, rsqrtf, rnorm3df, __expf, __sinf,
__cosf and __sincosf (the special-function unit's approximations and CUDA's polynomials),
cuRAND's generators and its float distributions. The GPU's results were recorded by
scripts/record_gpu_semantics.py (tests/data/gpu_semantics.json, a run of outputs of the one
measurement model, tiling_course.measure.model, names the device, date and versions); on a GPU,
test_gpu_backend_agrees runs them again."""
import base64
from pathlib import Path

import numpy as np
import pytest

import cudacheck
from tests.support.gpu_float_model import NO_FTZ, fma
from tests.support.gpu_semantics_cases import CURAND_DOUBLE_UNIFORM_SLOTS, cases
from tiling_course.measure import model

RECORD = model.read(Path(__file__).parents[1] / "data" / "gpu_semantics.json")
CASES = {c.name: c for c in cases()}


def _recorded(name):
    (case,) = RECORD.select(kernel=name)
    return [np.frombuffer(base64.b64decode(r["bytes"]), dtype=r["dtype"]) for r in case.extra["outputs"]]


def _run(case, backend="cpu", **kw):
    args = case.make_args()
    if backend == "gpu":
        import cupy
        dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    else:
        dev = args
    k = cudacheck.RawKernel(case.source, case.kernel, options=case.options, backend=backend, **kw)
    k((case.grid,), (case.block,), dev)
    if backend == "gpu":
        import cupy
        return [cupy.asnumpy(d) for a, d in zip(args, dev) if isinstance(a, np.ndarray)]
    return [a for a in args if isinstance(a, np.ndarray)]


def _outputs(case):
    """How many of the arguments are outputs (the rest are the inputs the GPU was given)."""
    return {"shifts": 4, "activemask": 1}.get(case.name, 3 if case.name.startswith("curand") else
                                               2 if case.name.startswith("fused") else 1)


def _mismatch(got, want):
    """The elements whose bytes differ; a NaN matches any NaN (a GPU's NaN is 0x7fffffff)."""
    g, w = got.view(np.uint8).reshape(len(got), -1), want.view(np.uint8).reshape(len(want), -1)
    differ = (g != w).any(axis=1)
    if got.dtype.kind == "f":
        differ &= ~(np.isnan(got) & np.isnan(want))
    return np.flatnonzero(differ)


ARITHMETIC = [n for n in CASES if not n.startswith("curand")]


@pytest.mark.parametrize("name", ARITHMETIC)
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_cpu_runtime_computes_what_the_gpu_computed(name, check):
    case = CASES[name]
    got = _run(case, check=check)
    want = _recorded(name)
    for i, (g, w) in enumerate(zip(got[:_outputs(case)], want), 1):
        bad = _mismatch(g, w)
        assert not len(bad), (f"{name}, output {i}: {len(bad)} of {len(w)} elements differ from the GPU's, first at "
                              f"{bad[:8].tolist()}: {g[bad[:8]].tolist()} here, {w[bad[:8]].tolist()} on the GPU")


@pytest.mark.parametrize("name", ["curand xorwow", "curand philox"])
def test_curand_device_api(name):
    """curand_init with seeds, subsequences and offsets up to 2^40, curand, curand4, skipahead,
    skipahead_sequence, the uniform distributions and the float normal and log-normal ones:
    bit for bit with the GPU; the double normal ones (the C library's log and sincospi for
    CUDA's) within 1e-13."""
    case = CASES[name]
    u, f, d = _run(case)[:3]
    gu, gf, gd = _recorded(name)[:3]
    assert np.array_equal(u, gu)
    assert not len(_mismatch(f, gf)), (f, gf)
    ud = list(CURAND_DOUBLE_UNIFORM_SLOTS[name])
    d, gd = d.reshape(-1, 4), gd.reshape(-1, 4)
    assert np.array_equal(d[:, ud], gd[:, ud])
    np.testing.assert_allclose(d, gd, rtol=1e-13, atol=1e-15)


# s += a*b and a*b - c, each contracted into one fma unless an option says otherwise
CONTRACTED = ('extern "C" __global__ void f(float* o, const float* a, const float* b, const float* c, int n) {\n'
              '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
              '    if (i < n) { float s = c[i]; s += a[i] * b[i]; o[i] = s; o[n + i] = a[i] * b[i] - c[i]; }\n}\n')


def _near_cancelling(rng, n):
    """a, b and c with c within a millionth of -a*b: the product's rounding decides the sum."""
    a, b = (rng.uniform(-4, 4, n).astype(np.float32) for _ in range(2))
    return a, b, (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-6, 1e-6, n))).astype(np.float32)


def test_contraction_on_fresh_inputs_rounds_once():
    """On fresh random operands, a*b + c equals the exactly rounded fma, not the twice-rounded
    product and sum (which the operands make differ in most elements)."""
    src = CONTRACTED
    n = 300
    a, b, c = _near_cancelling(np.random.default_rng(), n)
    o = np.zeros(2 * n, np.float32)
    cudacheck.RawKernel(src, "f", backend="cpu")((2,), (256,), (o, a, b, c, np.int32(n)))
    assert np.array_equal(o[:n], fma(a, b, c))
    assert np.array_equal(o[n:], fma(a, b, -c))
    assert (o[:n] != a * b + c).mean() > 0.5
    # --fmad=false, and -G (device code not optimized, unless -dopt asks for it), round twice
    for options, fused in [(("-fmad=false",), False), (("-G",), False), (("--device-debug",), False),
                           (("-G", "-dopt=on"), True)]:
        got = np.zeros(2 * n, np.float32)
        cudacheck.RawKernel(src, "f", options=options, backend="cpu")((2,), (256,), (got, a, b, c, np.int32(n)))
        assert np.array_equal(got[:n], fma(a, b, c) if fused else c + a * b), options
        assert np.array_equal(got[n:], fma(a, b, -c) if fused else a * b - c), options


@pytest.mark.gpu
def test_a_device_debug_build_rounds_the_product_and_the_sum_apart_on_the_gpu():
    """NVRTC's -G emits mul.f32 and add.f32 and ptxas, optimizing nothing, keeps them apart
    (Rodinia's hotspot3D, built -G, printed the CPU runtime's accuracy once it did the same)."""
    import cupy
    n = 1000
    a, b, c = _near_cancelling(np.random.default_rng(), n)
    for options in [("-G",), ()]:
        o = cupy.zeros(2 * n, cupy.float32)
        cudacheck.RawKernel(CONTRACTED, "f", options=options, backend="gpu")(
            (4,), (256,), (o, *map(cupy.asarray, (a, b, c)), np.int32(n)))
        cpu = np.zeros(2 * n, np.float32)
        cudacheck.RawKernel(CONTRACTED, "f", options=options, backend="cpu")((4,), (256,), (cpu, a, b, c, np.int32(n)))
        assert np.array_equal(cupy.asnumpy(o), cpu), options
        assert np.array_equal(cpu[:n], (c + a * b) if options else fma(a, b, c)), options


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(CASES))
def test_gpu_backend_agrees(name):
    case = CASES[name]
    got = _run(case, backend="gpu")
    for g, w in zip(got[:_outputs(case)], _recorded(name)):
        assert not len(_mismatch(g, w))


def test_readme_quotes_the_differential_corpus_run():
    """The README's share of bit-identical outputs is the one its run records (its numbers in
    tests/data/, the log it cites as evidence in logs/)."""
    import re
    root = Path(__file__).parents[2]
    readme = (root / "runtime" / "README.md").read_text()
    para = readme[readme.index("differential corpus (`scripts/corpus_gpu.py`"):]
    log = re.search(r"`(logs/[^`]+corpus[^`]+\.log)`", para).group(1)
    run = model.read(root / "tests" / "data" / "corpus-gpu-h100.json")
    assert run.kind == "counts" and run.meta.extra["log"] == log and len(run.records) == 1107
    assert all(r.ok for r in run.records)                   # every case-shape agreed with NumPy
    same = sum(a for r in run.records for a, _ in r.extra["gpu_equals_cpu"])
    total = sum(b for r in run.records for _, b in r.extra["gpu_equals_cpu"])
    num = lambda s: int(s.replace(",", ""))   # noqa: E731
    quoted = re.search(r"([\d,]+) of ([\d,]+) output\s+elements\s+\(([\d.]+)%\).*?every one of the ([\d,]+) integer"
                       r"\s+elements, and ([\d,]+) of the ([\d,]+) float ones\s+\(([\d.]+)%\)", para, re.S)
    assert quoted, "the README's sentence on the corpus changed: update this test"
    both, every, share, ints, floats_same, floats, float_share = quoted.groups()
    assert (num(both), num(every)) == (same, total)
    assert f"{100 * same / total:.1f}" == share
    assert num(ints) + num(floats) == total and num(ints) + num(floats_same) == same
    assert f"{100 * num(floats_same) / num(floats):.2f}" == float_share


def test_math_written_in_a_macros_arguments_is_the_gpus():
    """expf and logf in a macro's arguments (a body that uses its argument twice, one that
    stringizes it) compute what the same calls written plainly compute: the GPU's, not the C
    library's, which differ from them in about a third of these elements."""
    src = r'''
#define ID(x) (x)
#define TWICE(x) ((x) + (x))
#define STR(x) #x
extern "C" __global__ void k(float* o, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        o[i] = ID(expf(a[i]));
        o[n + i] = expf(a[i]);
        o[2 * n + i] = TWICE(logf(1.0f + expf(a[i])));
        float l = logf(1.0f + expf(a[i]));
        o[3 * n + i] = l + l;
        o[4 * n + i] = sizeof(STR(expf(1.0f)));
    }
}'''
    rng = np.random.default_rng()
    a = (rng.standard_normal(3000) * 4).astype(np.float32)
    n = a.size
    o = np.zeros(5 * n, np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu", options=NO_FTZ)((n // 256 + 1,), (256,), (o, a, np.int32(n)))
    assert np.array_equal(o[:n].view(np.uint32), o[n:2 * n].view(np.uint32))
    assert np.array_equal(o[2 * n:3 * n].view(np.uint32), o[3 * n:4 * n].view(np.uint32))
    assert (o[n:2 * n] != np.exp(a.astype(np.float64)).astype(np.float32)).mean() > 0.1   # not the C library's
    assert np.all(o[4 * n:] == len("expf(1.0f)") + 1)   # a stringized argument keeps its text
