"""The tensor-core chapter's kernels (kernels/tensor_cores.cu, kernels/ladder6_pipelined.cu) on the
CPU runtime, unchanged, plain and checked, on awkward shapes and at every precision; and the
runtime's nvcuda::wmma (cpu/include/mma.h) shape by shape and layout by layout.

Tolerances. A 16-bit or TF32 kernel multiplies rounded inputs, and a tensor core adds their
exact products in float: its result is compared with the float64 product of the rounded
inputs, within 1e-5 of sum_k |a_ik| |b_kj| (float accumulation of k <= 130 terms stays far
below it). The FP32 kernel: within 1e-5 of the same sum. A __half accumulator: within one
half-precision unit in the last place of the float64 result."""
import re

import numpy as np
import pytest

import cudacheck
from tests.support import ROOT


def cu_source(name):
    path = ROOT / "kernels" / f"{name}.cu"
    if not path.exists():
        pytest.skip(f"{path.name} is not in this checkout")
    return path.read_text()


def macros(name, **given):
    """The integer macros a source defaults with `#ifndef X / #define X value`, as `given` overrides
    them (the launch geometry follows them: each file's header)."""
    found = dict(re.findall(r"#ifndef (\w+)\s*\n#define \1 (\d+)\b", cu_source(name)))
    return {**{k: int(v) for k, v in found.items()}, **given}


def options(**given):
    return tuple(f"-D{k}={v}" for k, v in given.items())


SHAPES = [(37, 29, 53), (1, 1, 1), (100, 7, 130), (64, 64, 64), (130, 77, 129),
          (70, 96, 45), (45, 33, 136),   # rows of M 16-byte aligned and those of N not, and the reverse
          (130, 96, 136)]                # aligned, with whole 128 x 128 tiles inside and tiles at the edges
PRECISIONS = {"fp16": (), "bf16": ("-DTC_BF16",), "tf32": ("-DTC_TF32",)}
TOL = 1e-5


def bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (no NaN among the inputs here)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def tf32(x):
    """float32 rounded to TF32 as cvt.rna.tf32.f32 does: nearest, ties away from zero."""
    b = np.asarray(x, np.float32).view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def device_inputs(x, prec):
    """(what the kernel is passed, the float64 values it multiplies)."""
    if prec == "fp16":
        h = x.astype(np.float16)
        return h, h.astype(np.float64)
    if prec == "bf16":
        bits = bf16_bits(x)
        return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if prec == "tf32":
        return x.astype(np.float32), tf32(x).astype(np.float64)
    return x.astype(np.float32), x.astype(np.float64)


def assert_close(P, A, B, tol=TOL):
    ref = A @ B
    scale = np.abs(A) @ np.abs(B)
    err = np.abs(P.astype(np.float64) - ref)
    bad = np.argwhere(err > tol * scale + 1e-30)
    assert bad.size == 0, (f"{len(bad)} elements beyond {tol} of sum|a||b|, first at {tuple(bad[0])}: got "
                           f"{P[tuple(bad[0])]}, expected {ref[tuple(bad[0])]}")


@pytest.fixture(scope="module")
def tc_modules():
    src = cu_source("tensor_cores")
    return {(prec, check): cudacheck.RawModule(src, options=opts, backend="cpu", check=check)
            for prec, opts in PRECISIONS.items() for check in (False, True)}


def launch_tensor_cores(mod, name, prec, Ad, Bd, m, k, n, **given):
    """The launch the file's header documents, at its default macros or `given` ones."""
    f = mod.get_function(name)
    P = np.full((m, n), np.nan, np.float32)
    if name == "matmul_wmma_tiled":   # 4 warps, a 64 x 64 tile of P each block
        f(((n + 63) // 64, (m + 63) // 64), (128,), (Ad, Bd, P, m, k, n))
        return P, f
    c = macros("tensor_cores", **given)
    esz = 4 if prec == "tf32" else 2   # BK: 64 bytes of k; rows padded by 16 bytes
    bk, vec = c.get("BK", 64 // esz), 16 // esz
    smem = c["STAGES"] * (c["BM"] * (bk + vec) + bk * (c["BN"] + vec)) * esz
    f.max_dynamic_shared_size_bytes = smem
    threads = 32 * (c["BM"] // c["WM"]) * (c["BN"] // c["WN"])
    f((-(-n // c["BN"]), -(-m // c["BM"])), (threads,), (Ad, Bd, P, m, k, n), shared_mem=smem)
    return P, f


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("name", ["matmul_wmma_tiled", "matmul_wmma_pipelined"])
@pytest.mark.parametrize("prec", list(PRECISIONS))
def test_tensor_core_kernels_on_awkward_shapes(tc_modules, prec, name, check, rng):
    mod = tc_modules[(prec, check)]
    for m, k, n in SHAPES:
        A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        (Ad, A64), (Bd, B64) = device_inputs(A, prec), device_inputs(B, prec)
        P, f = launch_tensor_cores(mod, name, prec, Ad, Bd, m, k, n)
        assert_close(P, A64, B64)
        if check:   # every element of P written, none twice: the counts say so
            assert f.last_launch.global_counts["P"].stores == m * n


@pytest.mark.parametrize("prec", ["fp16", "bf16"])
def test_plain_and_checked_compute_the_same_bits(tc_modules, prec, rng):
    m, k, n = 70, 45, 33
    A, B = rng.uniform(-2, 2, (m, k)), rng.uniform(-2, 2, (k, n))
    (Ad, _), (Bd, _) = device_inputs(A.astype(np.float32), prec), device_inputs(B.astype(np.float32), prec)
    for name in ("matmul_wmma_tiled", "matmul_wmma_pipelined"):
        plain, _ = launch_tensor_cores(tc_modules[(prec, False)], name, prec, Ad, Bd, m, k, n)
        checked, _ = launch_tensor_cores(tc_modules[(prec, True)], name, prec, Ad, Bd, m, k, n)
        np.testing.assert_array_equal(plain.view(np.uint32), checked.view(np.uint32))


def test_the_inputs_travel_as_float16_and_as_bfloat16_bits(tc_modules, rng):
    mod = tc_modules[("fp16", False)]
    A = rng.uniform(-1, 1, (20, 16)).astype(np.float16)
    B = rng.uniform(-1, 1, (16, 24)).astype(np.float16)
    P16, _ = launch_tensor_cores(mod, "matmul_wmma_tiled", "fp16", A, B, 20, 16, 24)
    Pbits, _ = launch_tensor_cores(mod, "matmul_wmma_tiled", "fp16", A.view(np.uint16), B.view(np.uint16), 20, 16, 24)
    np.testing.assert_array_equal(P16, Pbits)   # a __half* takes float16 or its bits as uint16
    with pytest.raises(cudacheck.ArgumentError, match=r"__half.*float32.*float16"):
        launch_tensor_cores(mod, "matmul_wmma_tiled", "fp16", A.astype(np.float32), B, 20, 16, 24)
    with pytest.raises(cudacheck.ArgumentError, match=r"__nv_bfloat16.*float16.*bits as uint16"):
        launch_tensor_cores(tc_modules[("bf16", False)], "matmul_wmma_tiled", "bf16", A, B, 20, 16, 24)


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_the_fastest_tensor_core_tiles(check, rng):
    """The tiles the tuner found fastest on the H100 (8 warps of 64 x 64, 5 stages), over
    enough slices of k for the pipeline to wrap around its stages."""
    given = dict(BN=256, STAGES=5)
    mod = cudacheck.RawModule(cu_source("tensor_cores"), options=options(**given), backend="cpu", check=check)
    for m, k, n in [(37, 29, 53), (130, 250, 260), (130, 256, 264)]:
        A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        (Ad, A64), (Bd, B64) = device_inputs(A, "fp16"), device_inputs(B, "fp16")
        P, _ = launch_tensor_cores(mod, "matmul_wmma_pipelined", "fp16", Ad, Bd, m, k, n, **given)
        assert_close(P, A64, B64)


LADDER6_CONFIGS = {"defaults": {}, "three_stages": dict(BM=128, BN=128, WM=32, WN=64, STAGES=3)}


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("config", list(LADDER6_CONFIGS))
def test_ladder6_pipelined_on_awkward_shapes(config, check, rng):
    given = LADDER6_CONFIGS[config]
    f = cudacheck.RawKernel(cu_source("ladder6_pipelined"), "matmul_ladder6_pipelined", options=options(**given),
                            backend="cpu", check=check)
    c = macros("ladder6_pipelined", **given)
    smem = c["STAGES"] * (c["BK"] * (c["BM"] + c["MPAD"]) + c["BK"] * c["BN"]) * 4   # the file's header
    threads = 32 * (c["BM"] // c["WM"]) * (c["BN"] // c["WN"])
    f.max_dynamic_shared_size_bytes = smem
    for m, k, n in SHAPES:
        A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        P = np.full((m, n), np.nan, np.float32)
        f((-(-n // c["BN"]), -(-m // c["BM"])), (threads,), (A, B, P, m, k, n), shared_mem=smem)
        assert_close(P, A.astype(np.float64), B.astype(np.float64))


# ---- nvcuda::wmma, shape by shape ---------------------------------------------------------

MEM = {"half": ("__half", np.float16, 8), "bf16": ("__nv_bfloat16", np.uint16, 8), "tf32": ("float", np.float32, 4)}
FRAG = {"half": "__half", "bf16": "__nv_bfloat16", "tf32": "wmma::precision::tf32"}
ACC = {"float": (np.float32, 4), "__half": (np.float16, 8)}
# (input type, m, n, k, a's layout, b's layout, c's type, d's type)
CONFIGS = ([("half", *s, la, lb, "float", "float") for s in [(16, 16, 16), (32, 8, 16), (8, 32, 16)]
            for la, lb in [("row", "col"), ("col", "row"), ("row", "row"), ("col", "col")]]
           + [("half", 16, 16, 16, "row", "col", c, d) for c, d in [("__half", "__half"), ("__half", "float"),
                                                                     ("float", "__half")]]
           + [("half", 32, 8, 16, "col", "row", "__half", "__half")]
           + [("bf16", *s, la, lb, "float", "float") for s in [(16, 16, 16), (32, 8, 16), (8, 32, 16)]
              for la, lb in [("row", "col"), ("col", "row")]]
           + [("tf32", 16, 16, 8, la, lb, "float", "float") for la, lb in [("row", "row"), ("col", "col"),
                                                                          ("row", "col")]])


def config_name(c):
    return "mm_" + "_".join(str(v).replace("__", "") for v in c)


def wmma_source():
    """One kernel per configuration: d = a b + 2 c on one warp, every fragment loaded with a
    leading dimension past the tile's (padded rows), c in memory column-major, d stored
    column-major; each thread doubles its c elements by hand (x[i], num_elements), and
    thread 0 writes the fragments' num_elements."""
    out = ["#include <mma.h>", "using namespace nvcuda;"]
    for c in CONFIGS:
        t, m, n, k, la, lb, tc, td = c
        mem = MEM[t][0]
        out.append(f'''
extern "C" __global__ void {config_name(c)}(const {mem}* a, int lda, const {mem}* b, int ldb, const {tc}* c, int ldc,
                                  {td}* d, int ldd, int* counts) {{
    wmma::fragment<wmma::matrix_a, {m}, {n}, {k}, {FRAG[t]}, wmma::{la}_major> fa;
    wmma::fragment<wmma::matrix_b, {m}, {n}, {k}, {FRAG[t]}, wmma::{lb}_major> fb;
    wmma::fragment<wmma::accumulator, {m}, {n}, {k}, {tc}> fc;
    wmma::fragment<wmma::accumulator, {m}, {n}, {k}, {td}> fd;
    wmma::fill_fragment(fd, {td}(-7.0f));
    wmma::load_matrix_sync(fa, a, lda);
    wmma::load_matrix_sync(fb, b, ldb);
    wmma::load_matrix_sync(fc, c, ldc, wmma::mem_col_major);
    for (int i = 0; i < fc.num_elements; ++i)
        fc.x[i] = {tc}(2.0f * float(fc.x[i]));
    wmma::mma_sync(fd, fa, fb, fc);
    wmma::store_matrix_sync(d, fd, ldd, wmma::mem_col_major);
    if (threadIdx.x == 0) {{
        counts[0] = fa.num_elements;
        counts[1] = fb.num_elements;
        counts[2] = fc.num_elements;
    }}
}}''')
    return "\n".join(out)


# CUDA's num_elements (mma.h): __half a/b 16 (each element held twice or more), bf16 exact,
# tf32 4, accumulators 8.
NUM_ELEMENTS = {("half", 16, 16, 16): (16, 16), ("half", 32, 8, 16): (16, 16), ("half", 8, 32, 16): (16, 16),
                ("bf16", 16, 16, 16): (8, 8), ("bf16", 32, 8, 16): (16, 4), ("bf16", 8, 32, 16): (4, 16),
                ("tf32", 16, 16, 8): (4, 4)}


@pytest.fixture(scope="module")
def wmma_modules():
    src = wmma_source()
    return {check: cudacheck.RawModule(src, backend="cpu", check=check) for check in (False, True)}


def stored(x, layout, ld, dtype):
    """x (rows x cols) laid out in memory with leading dimension ld, padding filled with NaN-ish junk."""
    rows, cols = x.shape
    if layout == "col":
        buf = np.full((cols, ld), 99, dtype)
        buf[:, :rows] = x.T
    else:
        buf = np.full((rows, ld), 99, dtype)
        buf[:, :cols] = x
    return buf.reshape(-1)


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=config_name)
def test_wmma_shapes_layouts_and_leading_dimensions(wmma_modules, cfg, check, rng):
    t, m, n, k, la, lb, tc, td = cfg
    _, mdtype, pad = MEM[t]
    A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    C = rng.uniform(-1, 1, (m, n)).astype(ACC[tc][0]).astype(np.float32)
    if t == "half":
        A, B = A.astype(np.float16), B.astype(np.float16)
        Am, Bm = A, B
    elif t == "bf16":
        Am, Bm = bf16_bits(A), bf16_bits(B)
        A, B = (Am.astype(np.uint32) << 16).view(np.float32), (Bm.astype(np.uint32) << 16).view(np.float32)
    else:                   # TF32 values, exactly: the kernel does not round them
        A, B = tf32(A), tf32(B)
        Am, Bm = A, B
    lda = (k if la == "row" else m) + pad
    ldb = (n if lb == "row" else k) + pad
    ldc = m + ACC[tc][1]
    ldd = m + 2 * ACC[td][1]
    a = stored(Am, la, lda, mdtype)
    b = stored(Bm, lb, ldb, mdtype)
    c = stored(C.astype(ACC[tc][0]), "col", ldc, ACC[tc][0])
    d = np.full(n * ldd, 5, ACC[td][0])
    counts = np.zeros(3, np.int32)
    wmma_modules[check].get_function(config_name(cfg))(1, 32, (a, lda, b, ldb, c, ldc, d, ldd, counts))
    D = d.reshape(n, ldd)[:, :m].T.astype(np.float64)
    ref = A.astype(np.float64) @ B.astype(np.float64) + 2 * C.astype(np.float64)
    scale = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)) + 2 * np.abs(C)
    if td == "float":
        assert np.all(np.abs(D - ref) <= 1e-6 * scale)
    else:   # one rounding of the float64 result to __half
        np.testing.assert_array_equal(D, ref.astype(np.float16).astype(np.float64))
    assert np.all(d.reshape(n, ldd)[:, m:] == 5)    # nothing written into the padding
    assert tuple(counts[:2]) == NUM_ELEMENTS[(t, m, n, k)] and counts[2] == 8


TF32_SRC = r'''
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void round_tf32(const float* x, float* y, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        y[i] = wmma::__float_to_tf32(x[i]);
}
// a times b without rounding to TF32 first: the tensor core reads the upper 19 bits.
extern "C" __global__ void unrounded(const float* a, const float* b, float* d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}
'''


def test_float_to_tf32_rounds_to_nearest_ties_away_and_unrounded_elements_are_truncated(rng):
    mod = cudacheck.RawModule(TF32_SRC, backend="cpu")
    bits = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 2**19, 2000, dtype=np.uint32) << 13) | np.uint32(0x1000)   # exactly half-way
    edge = np.array([0x7F7FFFFF, 0xFF7FFFFF, 0x00000FFF, 0x00001000, 0x80001000, 0x7F800000, 0x3F800FFF],
                    np.uint32)
    x = np.concatenate([bits, ties, edge]).view(np.float32)
    finite = np.isfinite(x)
    y = np.zeros_like(x)
    mod.get_function("round_tf32")(1, 256, (x, y, x.size))
    np.testing.assert_array_equal(y[finite].view(np.uint32), tf32(x[finite]).view(np.uint32))
    assert np.isnan(y[np.isnan(x)]).all() and (y[np.isinf(x)] == x[np.isinf(x)]).all()
    assert (np.abs(y[-len(edge):][:2]) == np.inf).all()   # FLT_MAX rounds up to infinity

    A = rng.uniform(-1, 1, (16, 8)).astype(np.float32)
    B = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    D = np.zeros((16, 16), np.float32)
    mod.get_function("unrounded")(1, 32, (A, B, D))
    def upper_19_bits(v):
        return (v.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    ref = upper_19_bits(A) @ upper_19_bits(B)
    assert np.all(np.abs(D - ref) <= 1e-6 * (np.abs(A) @ np.abs(B)))
    assert not np.allclose(D, tf32(A).astype(np.float64) @ tf32(B), rtol=0, atol=1e-7)


# ---- the checker on the chapter's kernels with one line taken out -------------------------

MUTANTS = {
    # the barrier between staging a slice and reading it as fragments
    "tiled_without_barrier": ("tensor_cores", "matmul_wmma_tiled",
                              "        __syncthreads();\n        for (int kk = 0; kk < TK; kk += FRAG_K) {",
                              "        for (int kk = 0; kk < TK; kk += FRAG_K) {",
                              cudacheck.SharedMemoryRaceError),
    # the __syncwarp between a fragment's store to the staging tile and the lanes' reads of it
    "store_tile_without_syncwarp": ("tensor_cores", "matmul_wmma_tiled",
                                    "mem_row_major);\n    __syncwarp();\n    int lane", "mem_row_major);\n    int lane",
                                    cudacheck.SharedMemoryRaceError),
    # the wait for the first slice's copies, before the loop, and for the next slice's, in it
    "pipelined_without_first_wait": ("tensor_cores", "matmul_wmma_pipelined",
                                     "\n    __pipeline_wait_prior(STAGES - 2);", "", cudacheck.AsyncCopyRaceError),
    "pipelined_without_wait": ("tensor_cores", "matmul_wmma_pipelined",
                               "                __pipeline_wait_prior(STAGES - 2);", "", cudacheck.AsyncCopyRaceError),
    "ladder6_without_wait": ("ladder6_pipelined", "matmul_ladder6_pipelined",
                             "        __pipeline_wait_prior(STAGES - 2);", "", cudacheck.AsyncCopyRaceError),
}


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_checked_mode_finds_a_line_taken_out_of_the_chapters_kernels(mutant, rng):
    source, name, line, replacement, error = MUTANTS[mutant]
    src = cu_source(source)
    if line not in src:
        pytest.skip(f"{source}.cu no longer holds the line this mutant takes out")
    mod = cudacheck.RawModule(src.replace(line, replacement, 1), backend="cpu", check=True)
    m, k, n = 37, 72, 56       # several slices of k, rows 16-byte aligned: the copies are asynchronous
    A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    with pytest.raises(error) as e:
        if source == "ladder6_pipelined":
            c = macros(source)
            f = mod.get_function(name)
            smem = c["STAGES"] * (c["BK"] * (c["BM"] + c["MPAD"]) + c["BK"] * c["BN"]) * 4
            f.max_dynamic_shared_size_bytes = smem
            threads = 32 * (c["BM"] // c["WM"]) * (c["BN"] // c["WN"])
            f((-(-n // c["BN"]), -(-m // c["BM"])), (threads,), (A, B, np.zeros((m, n), np.float32), m, k, n),
              shared_mem=smem)
        else:
            (Ad, _), (Bd, _) = device_inputs(A, "fp16"), device_inputs(B, "fp16")
            launch_tensor_cores(mod, name, "fp16", Ad, Bd, m, k, n)
    assert "line " in str(e.value) and e.value.line > 0


@pytest.mark.parametrize("prec", list(PRECISIONS))
def test_the_wmma_ceiling_kernel_does_every_multiply(prec, rng):
    """kernels/wmma_ceiling.cu, which the tuner times for the ceiling of wmma
    (`python -m tiling_course.measure.tune --ceiling`), computes what its header says: accumulator j
    of each warp is iters times a[j / 4] * b[j % 4], with none of the multiplies folded."""
    src = rng.uniform(-1, 1, 1536).astype(np.float32)
    dev, values = device_inputs(src, prec)
    k = 8 if prec == "tf32" else 16
    iters, warps = 3, 2
    out = np.full(warps * 2048, np.nan, np.float32)
    f = cudacheck.RawKernel(cu_source("wmma_ceiling"), "wmma_ceiling", options=PRECISIONS[prec], backend="cpu",
                            check=True)
    f((1,), (32 * warps,), (dev, out, iters))
    a = [values[256 * i:256 * i + 16 * 16].reshape(16, 16)[:, :k] for i in range(2)]
    b = [values[512 + 256 * i:512 + 256 * i + 16 * 16].reshape(16, 16)[:k] for i in range(4)]
    for w in range(warps):
        for j in range(8):
            P = out[w * 2048 + 256 * j:w * 2048 + 256 * (j + 1)].reshape(16, 16)
            assert_close(P, iters * a[j // 4], b[j % 4])
