"""The benchmark (tiling_course/measure/bench.py) on the CPU runtime, at tiny sizes: the run the
book reads (the one measurement model, measure/model.py), correctness before timing, the derived
figures, skipped shapes, the command line. The GPU path is the same code with CUDA events as the
timer and cuBLAS as the reference. Shapes are M x N x K: P[M x N] = M[M x K] N[K x N]."""
import json
import math
import statistics

import numpy as np
import pytest

from tiling_course.measure import bench, model
from tiling_course.measure.model import Record, Shape

SIZES = (32, 40)     # 40 is not a multiple of 16: tiled and the Best Practices kernels skip it at tile 16
TILES = (8, 16)
SHAPES = (Shape(20, 28, 12),)
EXTRA_KEYS = {"max_abs_err": float, "ms_min": float, "ms_max": float, "ms_all": list, "gbs": float}


@pytest.fixture(scope="module")
def run():
    return bench.measure(sizes=SIZES, shapes=SHAPES, tiles=TILES, repeats=2, backend="cpu", progress=False)


def test_the_run_is_the_models(run):
    assert run.kind == "bench" and set(run.extra) == {"ceilings"}
    meta = run.meta
    assert set(meta.software) == {"cuda_runtime", "driver", "cupy", "numpy", "python"}
    assert meta.software["cuda_runtime"] is meta.software["driver"] is meta.software["cupy"] is None
    assert meta.device.startswith("CPU runtime") and meta.gpu["cores"] >= 1
    assert meta.software["numpy"] == np.__version__ and meta.extra == {"backend": "cpu", "repeats": 2, "tf32": False}
    assert meta.date.endswith("Z") and "measure(" in meta.command
    assert run.extra["ceilings"]["copy_gbs"] > 0 and run.extra["ceilings"]["fp32_tflops"] is None  # no cuBLAS
    for r in run.records:
        assert isinstance(r, Record) and isinstance(r.shape, Shape) and r.precision == "fp32"
        assert r.config == ({} if r.kernel == "numpy" else {"tile": r.config["tile"]})
        assert isinstance(r.ms, float) and isinstance(r.tflops, float) and r.frac_cublas is None
        assert set(r.extra) == set(EXTRA_KEYS)
        for key, kind in EXTRA_KEYS.items():
            assert isinstance(r.extra[key], kind), (key, r)
        assert len(r.extra["ms_all"]) == 2 and all(isinstance(t, float) for t in r.extra["ms_all"])
    assert model.Run.from_dict(json.loads(json.dumps(run.to_dict(), allow_nan=False))) == run


def test_every_kernel_is_correct(run):
    for r in run.records:
        assert r.ok and r.error < 1e-5, r
    kernels = {r.kernel for r in run.records}
    assert kernels == set(bench.FP32_KERNELS) | {"numpy"}
    assert not {"wmma_tiled", "wmma_pipelined"} & kernels   # timed at their precisions by tune.py


def test_derived_figures(run):
    for r in run.records:
        (m, n, k), ms, times = (r.shape.m, r.shape.n, r.shape.k), r.ms, r.extra["ms_all"]
        assert ms == statistics.median(times)
        assert r.extra["ms_min"] == min(times) <= ms <= max(times) == r.extra["ms_max"]
        assert math.isclose(r.tflops, 2 * m * n * k / ms / 1e9, rel_tol=1e-9)
        assert math.isclose(r.extra["gbs"], 4 * (m * k + k * n + m * n) / ms / 1e6, rel_tol=1e-9)


def test_unsupported_shapes_are_skipped_and_supported_ones_run(run):
    ran = {(r.kernel, r.config.get("tile"), r.shape) for r in run.records}
    cube = Shape.cube
    assert ("tiled", 16, cube(32)) in ran and ("tiled", 8, cube(40)) in ran
    assert ("tiled", 16, cube(40)) not in ran                 # 40 is not a multiple of 16
    # the Best Practices kernels: M x N x K = 40 x 40 x tile
    assert ("sharedABMultiply", 8, Shape(40, 40, 8)) in ran and ("sharedABMultiply", 16, Shape(40, 40, 16)) not in ran
    assert not any(k == "naive" and s == SHAPES[0] for k, _, s in ran)   # naive is square-only
    assert ("tiled_bounds", 16, SHAPES[0]) in ran and ("tiled_dynamic", 8, SHAPES[0]) in ran
    # the reference runs first at every shape, since each kernel is checked against it
    seen = set()
    for r in run.records:
        assert r.shape in seen or r.kernel == "numpy"
        seen.add(r.shape)


def test_plan_lists_best_practices_with_k_equal_to_the_tile():
    steps = bench.plan(bench.CpuBackend(), ["simpleMultiply", "naive"], [64], [], [8, 16])
    assert [(s.kernel, s.tile, str(s.shape)) for s in steps] == [
        ("numpy", None, "64x64x64"), ("naive", 8, "64x64x64"), ("naive", 16, "64x64x64"),
        ("numpy", None, "64x64x8"), ("simpleMultiply", 8, "64x64x8"),
        ("numpy", None, "64x64x16"), ("simpleMultiply", 16, "64x64x16")]


def test_a_wrong_kernel_is_recorded_and_not_timed():
    backend = bench.CpuBackend()
    step = bench.Step("tiled", 8, Shape.cube(16))
    buf = bench.Buffers(backend, step.shape, np.random.default_rng(0))
    bench.measure_reference(backend, buf, bench.Step("numpy", None, step.shape), 1)
    buf.R[3, 5] += 1.0  # the kernel now disagrees with the reference
    r = bench.measure_kernel(backend, buf, step, 1)
    assert not r.ok and r.error > 1e-3 and r.ms is None and r.extra["ms_all"] == []
    buf.P.fill(np.nan)
    assert bench.compare(backend, buf.P, buf.R) == (None, None)  # an unwritten element counts as wrong


def test_fractions_and_speedups():
    s = Shape.cube(64)
    rows = [Record("cublas", s, ok=True, ms=1.0), Record("naive", s, config={"tile": 16}, ok=True, ms=8.0),
            Record("tiled", s, config={"tile": 16}, ok=True, ms=2.0)]
    rows = bench.add_fractions(rows)
    assert [r.frac_cublas for r in rows] == [1.0, 0.125, 0.5]
    assert bench.tiled_speedups(rows) == {(64, 16): 4.0}


def test_main_writes_the_models_file(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--backend", "cpu", "--sizes", "32", "--tiles", "8", "--repeats", "1", "--output", str(out)])
    run = model.read(out)
    assert json.loads(out.read_text())["schema"] == model.SCHEMA and run.meta.extra["repeats"] == 1
    assert run.meta.command == ("python -m tiling_course.measure.bench --backend cpu --sizes 32 --tiles 8 --repeats 1 "
                                f"--output {out}")
    assert {r.shape.m for r in run.records} == {32} and all(r.ok for r in run.records)
    printed = capsys.readouterr().out
    assert "tiled speed-up over naive" in printed and "sharedABMultiply" in printed and "m x n x k" in printed


def test_shapes_on_the_command_line_are_m_by_n_by_k(tmp_path, capsys):
    out = tmp_path / "shape.json"
    bench.main(["--backend", "cpu", "--kernels", "tiled_bounds", "--shapes", "20x28x12", "--tiles", "8",
                "--repeats", "1", "--output", str(out)])
    (kernel,) = [r for r in model.read(out).records if r.kernel == "tiled_bounds"]
    assert kernel.shape == Shape(m=20, n=28, k=12) and "20x28x12" in capsys.readouterr().out


def test_merge_keeps_the_first_of_each_result(tmp_path, capsys):
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "merged.json"
    bench.main(["--backend", "cpu", "--kernels", "naive", "--sizes", "32", "--tiles", "8", "--repeats", "1",
                "--output", str(a)])
    bench.main(["--backend", "cpu", "--kernels", "naive", "tiled", "--sizes", "32", "--tiles", "8", "--repeats", "1",
                "--output", str(b)])
    bench.main(["--merge", str(a), str(b), "--output", str(out)])
    first, second, merged = (model.read(p) for p in (a, b, out))
    assert merged.meta.command == first.meta.command + " && " + second.meta.command
    assert merged.records == first.records + tuple(r for r in second.records if r.kernel == "tiled")


def test_bad_arguments():
    with pytest.raises(ValueError, match="tile"):
        bench.measure(sizes=[32], tiles=[64], backend="cpu", progress=False)
    with pytest.raises(ValueError, match="positive"):
        bench.measure(sizes=[0], backend="cpu", progress=False)
    with pytest.raises(ValueError, match="repeats"):
        bench.measure(sizes=[32], repeats=0, backend="cpu", progress=False)
    with pytest.raises(KeyError, match="no kernel"):
        bench.measure(kernels=["fast"], sizes=[32], backend="cpu", progress=False)
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "10x20", "--backend", "cpu"])
    with pytest.raises(ValueError, match="MxNxK"):
        Shape.parse("10x0x3")
