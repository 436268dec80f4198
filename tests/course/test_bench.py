"""The benchmark (course/tiling_course/bench.py) on the CPU runtime, at tiny sizes: the JSON schema the
book reads, correctness before timing, the derived figures, skipped shapes, the command
line. The GPU path is the same code with CUDA events as the timer and cuBLAS as the
reference."""
import json
import math
import statistics

import numpy as np
import pytest

from tiling_course import bench

SIZES = (32, 40)     # 40 is not a multiple of 16: tiled and the Best Practices kernels skip it at tile 16
TILES = (8, 16)
SHAPES = ((20, 12, 28),)

RESULT_KEYS = {"kernel": str, "tile": (int, type(None)), "m": int, "k": int, "n": int, "ok": bool,
               "max_abs_err": float, "rel_err": float, "ms_median": float, "ms_min": float, "ms_max": float,
               "ms_all": list, "tflops": float, "gbs": float, "frac_cublas": type(None)}


@pytest.fixture(scope="module")
def data():
    return bench.measure(sizes=SIZES, shapes=SHAPES, tiles=TILES, repeats=2, backend="cpu", progress=False)


def test_schema(data):
    assert set(data) == {"schema", "meta", "ceilings", "results"} and data["schema"] == 1
    meta = data["meta"]
    assert set(meta) == {"device", "backend", "cuda_runtime", "driver", "cupy", "numpy", "python", "date",
                         "command", "repeats", "tf32"}
    assert meta["backend"] == "cpu" and meta["cuda_runtime"] is meta["driver"] is meta["cupy"] is None
    assert meta["device"]["name"].startswith("CPU runtime") and meta["device"]["cores"] >= 1
    assert meta["numpy"] == np.__version__ and meta["repeats"] == 2 and meta["tf32"] is False
    assert meta["date"].endswith("Z") and "measure(" in meta["command"]
    assert data["ceilings"]["copy_gbs"] > 0 and data["ceilings"]["fp32_tflops"] is None  # no cuBLAS on a CPU
    for r in data["results"]:
        assert set(r) == set(RESULT_KEYS)
        for key, kind in RESULT_KEYS.items():
            assert isinstance(r[key], kind), (key, r)
        assert len(r["ms_all"]) == 2 and all(isinstance(t, float) for t in r["ms_all"])
    json.loads(json.dumps(data, allow_nan=False))


def test_every_kernel_is_correct(data):
    for r in data["results"]:
        assert r["ok"] and r["rel_err"] < 1e-5, r
    kernels = {r["kernel"] for r in data["results"]}
    assert kernels == set(bench.FP32_KERNELS) | {"numpy"}
    assert not {"wmma_tiled", "wmma_pipelined"} & kernels   # timed at their precisions by tune.py


def test_derived_figures(data):
    for r in data["results"]:
        m, k, n, ms = r["m"], r["k"], r["n"], r["ms_median"]
        assert ms == statistics.median(r["ms_all"])
        assert r["ms_min"] == min(r["ms_all"]) <= ms <= max(r["ms_all"]) == r["ms_max"]
        assert math.isclose(r["tflops"], 2 * m * k * n / ms / 1e9, rel_tol=1e-9)
        assert math.isclose(r["gbs"], 4 * (m * k + k * n + m * n) / ms / 1e6, rel_tol=1e-9)


def test_unsupported_shapes_are_skipped_and_supported_ones_run(data):
    ran = {(r["kernel"], r["tile"], (r["m"], r["k"], r["n"])) for r in data["results"]}
    assert ("tiled", 16, (32, 32, 32)) in ran and ("tiled", 8, (40, 40, 40)) in ran
    assert ("tiled", 16, (40, 40, 40)) not in ran                 # 40 is not a multiple of 16
    assert ("sharedABMultiply", 8, (40, 8, 40)) in ran and ("sharedABMultiply", 16, (40, 16, 40)) not in ran
    assert not any(k == "naive" and s == (20, 12, 28) for k, _, s in ran)   # naive is square-only
    assert ("tiled_bounds", 16, (20, 12, 28)) in ran and ("tiled_dynamic", 8, (20, 12, 28)) in ran
    # the reference runs first at every shape, since each kernel is checked against it
    seen = set()
    for r in data["results"]:
        shape = (r["m"], r["k"], r["n"])
        assert shape in seen or r["kernel"] == "numpy"
        seen.add(shape)


def test_plan_lists_best_practices_with_k_equal_to_the_tile():
    steps = bench.plan(bench.CpuBackend(), ["simpleMultiply", "naive"], [64], [], [8, 16])
    assert [(s.kernel, s.tile, s.shape) for s in steps] == [
        ("numpy", None, (64, 64, 64)), ("naive", 8, (64, 64, 64)), ("naive", 16, (64, 64, 64)),
        ("numpy", None, (64, 8, 64)), ("simpleMultiply", 8, (64, 8, 64)),
        ("numpy", None, (64, 16, 64)), ("simpleMultiply", 16, (64, 16, 64))]


def test_a_wrong_kernel_is_recorded_and_not_timed():
    backend = bench.CpuBackend()
    step = bench.Step("tiled", 8, (16, 16, 16))
    buf = bench.Buffers(backend, step.shape, np.random.default_rng(0))
    bench.measure_reference(backend, buf, bench.Step("numpy", None, step.shape), 1)
    buf.R[3, 5] += 1.0  # the kernel now disagrees with the reference
    r = bench.measure_kernel(backend, buf, step, 1)
    assert not r["ok"] and r["rel_err"] > 1e-3 and r["ms_median"] is None and r["ms_all"] == []
    buf.P.fill(np.nan)
    assert bench.compare(backend, buf.P, buf.R) == (None, None)  # an unwritten element counts as wrong


def test_fractions_and_speedups():
    rows = [{"kernel": "cublas", "tile": None, "m": 64, "k": 64, "n": 64, "ok": True, "ms_median": 1.0},
            {"kernel": "naive", "tile": 16, "m": 64, "k": 64, "n": 64, "ok": True, "ms_median": 8.0},
            {"kernel": "tiled", "tile": 16, "m": 64, "k": 64, "n": 64, "ok": True, "ms_median": 2.0}]
    for r in rows:
        r["frac_cublas"] = None
    bench.add_fractions(rows)
    assert [r["frac_cublas"] for r in rows] == [1.0, 0.125, 0.5]
    assert bench.tiled_speedups(rows) == {(64, 16): 4.0}


def test_main_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--backend", "cpu", "--sizes", "32", "--tiles", "8", "--repeats", "1", "--output", str(out)])
    data = json.loads(out.read_text())
    assert data["schema"] == 1 and data["meta"]["repeats"] == 1
    assert data["meta"]["command"] == ("python -m tiling_course.bench --backend cpu --sizes 32 --tiles 8 --repeats 1 "
                                       f"--output {out}")
    assert {r["m"] for r in data["results"]} == {32} and all(r["ok"] for r in data["results"])
    printed = capsys.readouterr().out
    assert "tiled speed-up over naive" in printed and "sharedABMultiply" in printed


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
