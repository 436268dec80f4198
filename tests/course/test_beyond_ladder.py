"""Rung 6 and the tensor-core chapter (issue 16), the way the book uses them: every number the
prose states about them is computed here from the stored tuning data (data/tuning-*.json) or
from a fresh run; the tensor-core kernels through matmul.run and the checker at each precision
on awkward shapes; the chapter's wrong kernels refused with the right error; and on a GPU the
same kernels beside the CPU runtime. (The runtime's wmma, half types and pipeline are tested
on their own in test_tensor_cores_cpu.py.)"""
import json
import re
import shutil

import numpy as np
import pytest

from tests.support import ROOT
from tiling_course import accuracy, matmul, perfplots, precision, sources, tasks, tryout
from tiling_course.measure import model, perfdata, tune, tuning

DATA = tuning.tunings()
CH6 = ROOT / "book" / "06_beyond.ipynb"
CH8 = ROOT / "book" / "08_tensor_cores.ipynb"


def prose(path):
    """A chapter's Markdown, whitespace collapsed (a claim may wrap anywhere)."""
    cells = json.loads(path.read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")


def test_the_tuning_data_covers_both_gpus_with_labels():
    assert [t.device for t in DATA] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    for t in DATA:
        assert t.size == 4096 and t.meta.date and t.meta.software["cupy"] and "TF32 off" in t.meta.extra["cublas_math"]
        # every configuration that ran was checked against cuBLAS at its precision
        for r in t.records:
            if r.ok:
                assert max(r.extra["rel_err"].values()) <= precision.TOLERANCE[r.precision]
                assert r.cublas_tflops > 0 and 0 < r.frac_cublas < 1.2


def test_chapter_6_states_what_rung_6_measured():
    text = prose(CH6)
    for t in DATA:
        six, five, book5 = (t.best("ladder6_pipelined"), t.best("ladder5_warptiled"),
                            t.config("ladder5_warptiled", tuning.RUNG5_BOOK))
        assert round(six.frac_cublas, 2) == 0.85                               # "0.85 of cuBLAS"
        assert 0.89 <= round(five.frac_cublas, 2) <= 0.90                     # "against 0.89 to 0.90"
        assert six.frac_cublas < five.frac_cublas and book5.frac_cublas < five.frac_cublas
        assert (five.config["BM"], five.config["BN"], five.config["WM"], five.config["WN"],
                five.config["MINBLOCKS"], five.extra["registers"]) == (128, 256, 64, 64, 1, 217)
        assert max(r.frac_cublas for r in t.records if r.ok and r.precision == "fp32") < 0.95
        # "tried 75 configurations of rung 6 and 16 of rung 5 ... of rung 5's, 14 were timed"
        assert t.searched("ladder6_pipelined") == (75, 75) and t.searched("ladder5_warptiled") == (16, 14)
        failed = [r for r in t.records if r.kernel == "ladder5_warptiled" and not r.ok]
        assert all("too much shared data" in r.extra["error"] for r in failed)   # "do not compile"
        same = [r for r in t.records if r.kernel == "ladder6_pipelined" and r.ok
                and {k: v for k, v in r.config.items() if k != "GROUP"}
                == {k: v for k, v in six.config.items() if k != "GROUP"}]
        assert sorted(r.config["GROUP"] for r in same) == [1, 4, 8, 16]   # "the four orders tried"
        groups = [r.frac_cublas for r in same]
        assert max(groups) - min(groups) < 0.01                             # "within 1% of each other"
    assert re.search(r"#define GROUP 1\b", matmul.source("ladder6_pipelined"))
    assert "tried 75 configurations of rung 6 and 16 of rung 5 on each GPU" in text
    assert ("All 75 of rung 6 compiled and were timed; of rung 5's, 14 were timed, and the other 2 "
            "do not compile") in text
    assert "the four orders tried (`GROUP` 8 in the first round of tuning, then 1, 4 and 16)" in text
    assert "0.85 of cuBLAS against 0.89 to 0.90" in text and "within 1% of each other" in text


def test_chapter_6_says_which_tiles_and_slices_it_compares():
    """The two best configurations share blocks and warp tiles but not BK; at rung 5's BK, rung 6
    is further behind; rung 5 cannot take rung 6's BK with those tiles (ptxas refuses the static
    shared memory); the book's own tiles give rung 5 the ladder table's 0.86 to 0.87."""
    text = prose(CH6)
    tiles = ("BM", "BN", "WM", "WN")
    for t in DATA:
        six, five = t.best("ladder6_pipelined"), t.best("ladder5_warptiled")
        assert [six.config[k] for k in tiles] == [five.config[k] for k in tiles] == [128, 256, 64, 64]
        assert (six.config["BK"], five.config["BK"]) == (16, 8)
        at8 = max(r.frac_cublas for r in t.records if r.kernel == "ladder6_pipelined" and r.ok
                  and [r.config[k] for k in tiles] == [128, 256, 64, 64] and r.config["BK"] == 8)
        assert round(at8, 2) == 0.80
        refused = next(r for r in t.records if r.kernel == "ladder5_warptiled" and r.config
                       == {**five.config, "BK": 16})
        assert not refused.ok and "uses too much shared data" in refused.extra["error"]
        assert "49664 bytes smem" in refused.extra["error"] and 49_664 > 48 * 1024
        book5 = t.config("ladder5_warptiled", tuning.RUNG5_BOOK).config
        assert [book5[k] for k in tiles + ("BK",)] == [128, 128, 32, 64, 16]
    for ds in perfdata.datasets():   # the ladder table's rung 5, the book's tiles
        assert round(ds.result("ladder5_warptiled", perfplots.LADDER_TILE, 4096).frac_cublas, 2) in (0.86, 0.87)
    for claim in ("rung 6's best takes `BK` 16", "for rung 5's, which takes `BK` 8",
                  "at `BK` 8 rung 6 reaches only 0.80", "49,664 bytes of shared memory",
                  "0.86 to 0.87 of cuBLAS it reaches with the book's own tiles (128 x 128 blocks, 32 x 64 warp tiles, "
                  "`BK` 16)"):
        assert claim in text, claim
    assert "issue's" not in text and "target of" not in text


# Chapter 8's side-by-side runs, the wmma ceiling and the profiler's counters, as stored with the
# book (data/wmma-probes.json, transcribed from the runs' records; no test reads logs/).
PROBES = model.stored_run("wmma-probes.json")      # a run of counts of the one measurement model
H100 = "NVIDIA H100 80GB HBM3"


def test_chapter_8_states_what_the_tensor_core_kernels_measured():
    text = prose(CH8)
    for t in DATA:
        for p in ("fp16", "bf16", "tf32"):
            tiled, piped = t.best("wmma_tiled", p), t.best("wmma_pipelined", p)
            assert piped.tflops > 2 * tiled.tflops
        tiled, piped = t.best("wmma_tiled", "fp16"), t.best("wmma_pipelined", "fp16")
        assert round(tiled.tflops) == 45                                       # "45 TFLOP/s"
        rung5 = t.config("ladder5_warptiled", tuning.RUNG5_BOOK).tflops
        assert 8 < piped.tflops / rung5 < 9                                    # "more than eight times rung 5"
        assert round(t.best("wmma_pipelined", "bf16").frac_cublas, 2) in (0.31, 0.32)   # "BF16 (0.31 to 0.32"
        assert round(t.best("wmma_pipelined", "tf32").frac_cublas, 2) in (0.21, 0.22)   # "TF32 (0.22)"
        cublas = {p: float(np.median([r.cublas_tflops for r in t.records if r.ok and r.precision == p]))
                  for p in ("fp16", "fp32")}
        assert 13 < cublas["fp16"] / cublas["fp32"] < 15                         # "a fourteenth of the speed"
        assert t.searched("wmma_pipelined") == (52, 52)                           # 46 at FP16, 3 + 3 more
        fastest = sorted((r for r in t.records if r.ok and r.kernel == "wmma_pipelined"
                          and r.precision == "fp16"), key=lambda r: -r.frac_cublas)[:3]
        for r in fastest:       # "blocks of 8 warps, 128 x 256, with 64-byte slices and 3 to 5 stages"
            c = r.config
            assert (c["BM"], c["BN"], c["WM"], c["WN"], c["BK_BYTES"]) == (128, 256, 64, 64, 64)
            assert 3 <= c["STAGES"] <= 5
    assert len(list(tune.wmma_round1())) == 48                                    # two of 48 did not fit
    (h100, h200) = DATA
    assert [round(t.best("wmma_pipelined", "fp16").tflops, -1) for t in DATA] == [380, 390]
    assert [round(t.best("wmma_pipelined", "fp16").frac_cublas, 2) for t in DATA] == [0.52, 0.52]
    assert "0.52 of cuBLAS FP16 on both GPUs" in text and "380 on the H100 and 390 on the H200" in text
    fp16 = {t.device: [r.cublas_tflops for r in t.records if r.ok and r.precision == "fp16"]
            for t in DATA}
    assert (round(min(fp16[h100.device])), round(max(fp16[h100.device]))) == (723, 735)
    assert "723 to 735 TFLOP/s on the H100" in text
    assert (round(min(fp16[h200.device])), round(max(fp16[h200.device]))) == (733, 746)
    assert "at 723 to 735 TFLOP/s on the H100 and 733 to 746 on the H200, is above it" in text
    # wgmma: B always from shared memory, A from shared memory or registers (PTX ISA)
    assert "reads its `B` operand straight from shared memory and its `A` operand from shared memory or registers" \
        in text and "takes its operands from shared memory directly" not in text
    default = {**matmul.PIPELINE_DEFAULTS["wmma_pipelined"], "WM": 64, "WN": 64}
    assert [round(t.config("wmma_pipelined", default, "fp16").frac_cublas, 2) for t in DATA] == [0.42, 0.44]
    assert matmul.pipeline_shared_bytes("wmma_pipelined", "fp16") == 56_832 < 64 * 1024    # fits a T4's block
    assert matmul.pipeline_shared_bytes("wmma_pipelined", "fp16", BN=256) == 81_408 > 64 * 1024
    # the fastest configuration at FP16, the same on both GPUs, and its shared memory
    fastest = {tuple(sorted(t.best("wmma_pipelined", "fp16").config.items())) for t in DATA}
    assert len(fastest) == 1
    (best,) = (dict(c) for c in fastest)
    assert best == {"BM": 128, "BN": 256, "WM": 64, "WN": 64, "BK_BYTES": 64, "STAGES": 5}
    best_bytes = matmul.pipeline_shared_bytes("wmma_pipelined", "fp16", **{k: v for k, v in best.items()
                                                                        if k != "BK_BYTES"})
    assert best_bytes == 135_680 > 64 * 1024
    assert ("The fastest configuration on both GPUs, those 128 x 256 blocks with 5 stages, takes "
            f"{best_bytes:,}; with 3 stages the same blocks take 81,408") in text
    assert f"the tuner's fastest configuration ({best_bytes:,} bytes, 5 stages) does not" in text
    # the log's side-by-side runs: one fragment buffer and two, the same tiles; the wmma ceiling
    one, two = (r.tflops for r in PROBES.select(label="fragment buffers"))
    assert [r.config["fragment_buffers"] for r in PROBES.select(label="fragment buffers")] == [1, 2]
    inside = PROBES.select(label="tiles inside")
    for run in (1, 2):      # "added 2 to 4% on those tiles" (128 x 256 blocks)
        by = {(r.config["tiles_inside"], r.config["tiles"]): r.frac_cublas for r in inside if r.extra["run"] == run}
        gains = [by["after", t] / by["before", t] - 1 for t in ("128x256, 3 stages", "128x256, 4 stages",
                                                                "128x256, 5 stages")]
        assert all(0.02 <= g <= 0.04 for g in gains), gains
    assert "added 2 to 4% on those tiles" in text
    assert (round(one), round(two)) == (279, 364) and "279 TFLOP/s, with two 364" in text
    # the ceiling is the fastest of a row's warps per multiprocessor
    ceiling = PROBES.select(kernel="wmma_ceiling")
    ceilings = [max(r.tflops for r in ceiling if r.extra["run"] == d) for d in (H100, "NVIDIA H200")]
    again = max(r.tflops for r in ceiling if r.extra["run"] in (f"{H100}, run again", f"{H100}, tune --ceiling"))
    assert {r.config["warps_per_sm"] for r in ceiling} == {4, 8, 16} and len(ceiling) == 12
    assert all(640 < c < 660 for c in ceilings + [again]) and "about 650 TFLOP/s at FP16 on both GPUs" in text
    (counters,) = (r.extra for r in PROBES.select(kernel="wmma_pipelined", label="counters"))
    pipe = counters["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"]
    eligible = counters["smsp__warps_eligible.avg.per_cycle_active"]
    active = counters["smsp__warps_active.avg.per_cycle_active"]
    instructions = counters["smsp__inst_executed.sum"]
    assert (round(pipe), eligible, active) == (66, 0.50, 2.0)
    assert "busy 66% of the time and, in an average cycle, 0.50 of a warp ready to issue of the 2 warps" in text
    assert round(instructions / 4096**3 * (16 * 8 * 16) - 1, 1) == 2.6 and "runs 2.6 other instructions" in text
    for t, ceiling in zip(DATA, ceilings):
        assert round(100 * t.best("wmma_pipelined", "fp16").tflops / ceiling) in (58, 60)   # "58 to 60%"
        assert min(r.cublas_tflops for r in t.records if r.ok and r.precision == "fp16") > ceiling
    # cuBLAS's wgmma against the kernel's mma.sync (m16n8k16: 4096^3 / (16 x 8 x 16) of them)
    (cublas,) = PROBES.select(kernel="cublas")
    hmma, gmma = counters["sm__inst_executed_pipe_tensor_op_hmma.sum"], \
        cublas.extra["sm__inst_executed_pipe_tensor_op_gmma.sum"]
    assert hmma == 4096**3 // (16 * 8 * 16)
    assert f"counts {gmma / 1e6:.1f} million of them at 4096^3 against our {hmma / 1e6:.1f} million `mma.sync`" in text
    assert PROBES.meta.date == "2026-11-23" and set(PROBES.meta.extra["devices"]) == {t.device for t in DATA}


def test_the_sources_defaults_are_the_ones_the_book_measured():
    """The wmma kernel's macros (128 x 128 blocks of 64 x 64 warp tiles, 3 stages, 64 bytes
    of k) are those the chapter's text and matmul's geometry assume."""
    src = matmul.source("wmma_pipelined")
    found = dict(re.findall(r"#ifndef (\w+)\n#define \1 ([^\n]+?)\s*(?://[^\n]*)?\n#endif", src))
    assert (found["BM"], found["BN"], found["WM"], found["WN"], found["STAGES"]) == ("128", "128", "64", "64", "3")
    assert found["BK"] == "(64 / (int)sizeof(elem_t))"
    spec = matmul.spec("wmma_pipelined")
    assert spec.block == (32 * (128 // 64) * (128 // 64), 1) and (spec.tile_m, spec.tile_n) == (128, 128)
    tiled = matmul.spec("wmma_tiled")
    assert tiled.block == (128, 1) and (tiled.tile_m, tiled.tile_n) == (64, 64)
    # dynamic shared memory per precision: 3 stages of 128 rows of (64 + 16) bytes of M and
    # 64 bytes' worth of rows of 128 elements + 16 bytes of N
    assert matmul.geometry("wmma_tiled", 5, 5, 5, 16)[2] == 0
    for p, size in (("fp16", 2), ("bf16", 2), ("tf32", 4)):
        shared = matmul.Launch("wmma_pipelined").geometry(5, 5, 5, 16, precision=p)[2]
        assert shared == 3 * (128 * 80 + 64 // size * (128 * size + 16))
    fp16, tf32 = (matmul.pipeline_shared_bytes("wmma_pipelined", p) for p in ("fp16", "tf32"))
    assert f"({fp16:,} bytes for FP16 and BF16, {tf32:,} for TF32, at the defaults" in " ".join(src.split())


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (no GPU)")
def test_the_tuner_records_each_kernels_own_registers(tmp_path):
    """tensor_cores.cu holds two kernels, and ptxas reports both: each record carries its own
    kernel's registers (the tiled kernel uses far fewer), as the stored data does."""
    regs = {f: tune.compile_one(sources.path("tensor_cores.cu"), "sm_90", [], tmp_path / "t.cubin", f)[1][0]
            for f in ("matmul_wmma_tiled", "matmul_wmma_pipelined")}
    assert regs["matmul_wmma_tiled"] < 100 < regs["matmul_wmma_pipelined"]
    for t in DATA:
        assert all(r.extra["registers"] < 100 for r in t.records if r.kernel == "wmma_tiled")


@pytest.mark.parametrize("kernel", ["wmma_tiled", "wmma_pipelined"])
@pytest.mark.parametrize("prec", ["fp16", "bf16", "tf32"])
def test_the_checker_passes_the_books_tensor_core_kernels(kernel, prec, rng):
    out = tryout.run(None, kernel, precision=prec, rng=rng, gpu=False, quiet=True)
    assert out, out.message
    assert f"{prec.upper()}-rounded inputs" in out.message


def test_precision_is_refused_where_it_does_not_apply():
    with pytest.raises(ValueError, match="tiled multiplies in fp32; got precision='fp16'"):
        tasks.product(matmul.Launch("tiled"), "fp16")
    with pytest.raises(ValueError, match="multiplies in fp16, bf16, tf32"):
        matmul.run(np.ones((2, 2)), np.ones((2, 2)), "wmma_tiled", backend="cpu", precision="fp64")


def test_the_tensor_core_checker_compares_with_the_rounded_inputs(rng):
    """A kernel that multiplies the unrounded floats (the FP32 rung 5 posing as a TF32 kernel)
    would be wrong by TF32's rounding; the comparison is with what TF32 multiplies."""
    M, N = rng.uniform(-1, 1, (40, 300)).astype(np.float32), rng.uniform(-1, 1, (300, 30)).astype(np.float32)
    task = tasks.TensorCoreMatmul(matmul.Launch("wmma_tiled"), "tf32")
    exact = (M.astype(np.float64) @ N.astype(np.float64)).astype(np.float32)
    assert task.compare(exact, (M, N), 16) is not None
    P, _ = task.run(None, (M, N), 16, "cpu", False)
    assert task.compare(P, (M, N), 16) is None


def test_accuracy_claims_hold_on_fresh_inputs(rng):
    rows = {r.precision: r for r in accuracy.measure(m=64, k=512, n=48, backend="cpu", rng=rng)}
    assert rows["fp32"].inputs == 0 and rows["fp32"].total < 1e-5
    for p in ("tf32", "fp16", "bf16"):
        assert rows[p].kernel_own * 100 < rows[p].inputs           # three to four orders of magnitude
        assert rows[p].kernel_own < 10 * rows["fp32"].kernel_own + 1e-6   # FP32-sized accumulation
        assert rows[p].inputs < rows[p].unit_roundoff             # the inputs' rounding, averaged down
    assert 0.5 < rows["tf32"].inputs / rows["fp16"].inputs < 2     # "lose about the same"
    assert 4 < rows["bf16"].inputs / rows["fp16"].inputs < 16      # "about eight times as much"


def test_the_chapters_wrong_kernels_get_the_right_lesson(rng):
    from cudacheck import errors
    src = matmul.source("wmma_tiled")
    half = matmul.apply_edits(src, [("wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);",
                                     "if (threadIdx.x % 32 < 16) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);")],
                              "half_warp", "tensor_cores.cu")
    out = tryout.run(half, "wmma_tiled", shapes=[(64, 32, 64)], gpu=False, quiet=True, rng=rng)
    assert not out and isinstance(out.error, errors.WarpCollectiveError) and "lanes 0-15" in out.message
    ldm = matmul.apply_edits(src, [("wmma::load_matrix_sync(a[i], &Ms[wrow + 16 * i][kk], TK);",
                                    "wmma::load_matrix_sync(a[i], &Ms[wrow + 16 * i][kk], TK + 4);")],
                             "bad_ldm", "tensor_cores.cu")
    out = tryout.run(ldm, "wmma_tiled", shapes=[(64, 32, 64)], gpu=False, quiet=True, rng=rng)
    assert not out and isinstance(out.error, errors.LeadingDimensionError) and "ldm = 36" in out.message


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["wmma_tiled", "wmma_pipelined", "ladder6_pipelined"])
def test_the_new_kernels_on_the_gpu_match_the_cpu_runtime(kernel, rng):
    import cupy
    for prec in matmul.spec(kernel).precisions:
        if not precision.runs_on_this_gpu(prec):
            continue
        for m, k, n in [(1, 1, 1), (37, 29, 53), (130, 77, 129), (1000, 999, 1003), (300, 1000, 1003),
                        (1024, 512, 2048)]:
            M, N = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
            P = matmul.multiply(cupy.asarray(M), cupy.asarray(N), kernel, backend="gpu", precision=prec).get()
            task = tasks.product(matmul.Launch(kernel), prec)
            assert task.compare(P, (M, N), 16) is None, (kernel, prec, (m, k, n))
            if m * n <= 130 * 129:
                Q = matmul.multiply(M, N, kernel, backend="cpu", precision=prec)
                assert task.compare(Q, (M, N), 16) is None


def test_chapter_6_states_what_cublas_does_that_rung_5_cannot():
    """Every number of 'What cuBLAS does that rung 5 cannot', from the stored counters
    (data/fp32-gap-*.json, measure.fp32_gap): the sweep's patches, the shared shape, the
    counts that differ and the two FMA figures whose ratio matches the times'."""
    text = prose(CH6)
    (run,) = [r for r in tuning.fp32_gaps() if r.device == "NVIDIA H100 80GB HBM3"]

    def value(who, metric):
        return tuning.gap_value(run, who, metric)
    timed = [r for r in run.records if r.frac_cublas is not None]
    assert timed == [r for r in run.records if r.ok] and len(timed) == 4   # the other four did not build
    best = max(timed, key=lambda r: r.frac_cublas)
    assert (best.config["TM"], best.config["TN"]) == (4, 4) and best == run.best
    others = sorted(round(r.frac_cublas, 2) for r in timed if r is not best)
    assert {(r.config["TM"], r.config["TN"]) for r in timed if r is not best} == {(4, 8), (8, 4), (8, 8)}
    assert (others[0], others[-1]) == (0.85, 0.88) and "each was slower, at 0.85 to 0.88 of cuBLAS" in text
    assert all(r.frac_cublas < 0.95 for r in timed) and "No CUDA C kernel of this book reaches 0.95" in text
    kernel = run.profiles["cublas"]["kernel"]
    assert "tilesize256x128x8" in kernel and "stage3" in kernel and "warpsize4x2x1" in kernel   # 8 warps
    for who in ("rung5", "cublas"):
        assert value(who, "launch__grid_size") == 512 and value(who, "launch__block_size") == 256
        assert value(who, "sm__warps_active.avg.pct_of_peak_sustained_active") == 12.5      # one block of 64 warps
        assert round(value(who, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") / 1e9, 1) == 68.7
        assert value(who, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") >= 4096 ** 3   # one per term
        assert value(who, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") == 0
    loads = [value(w, "smsp__inst_executed_op_shared_ld.sum") for w in ("rung5", "cublas")]
    assert abs(loads[0] / loads[1] - 1) < 0.01                                          # "about as many"
    assert round(value("rung5", "smsp__inst_executed_op_global_ld.sum") / 1e6, 1) == 6.3
    assert round(value("rung5", "smsp__inst_executed_op_shared_st.sum") / 1e6, 1) == 12.6
    assert value("cublas", "smsp__inst_executed_op_global_ld.sum") < 0.01 * 6.3e6       # "almost no plain loads"
    assert value("cublas", "smsp__inst_executed_op_shared_st.sum") < 0.02 * 12.6e6
    issue = [value(w, "smsp__issue_active.avg.pct_of_peak_sustained_active") for w in ("cublas", "rung5")]
    fma = [value(w, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active") for w in ("cublas", "rung5")]
    assert (round(issue[0]), round(issue[1], 1)) == (90, 78.5) and (round(fma[0], 1), round(fma[1], 1)) == (79.8, 71.9)
    times = [value(w, "gpu__time_duration.sum") for w in ("cublas", "rung5")]
    assert round(fma[1] / fma[0], 2) == 0.90 and round(times[0] / times[1], 2) == 0.89
    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    assert [value(w, stall.format("wait")) for w in ("rung5", "cublas")] == [0.16, 0.01]
    assert [value(w, stall.format("dispatch_stall")) for w in ("rung5", "cublas")] == [0.23, 0.10]
    assert [value(w, "launch__registers_per_thread") for w in ("cublas", "rung5")] == [254, 217]
    for claim in ("issue in 90% of cycles against rung 5's 78.5%", "busy 79.8% of the time against 71.9%",
                  "ratio 0.90, about the ratio of the times, 0.89", "0.16 cycles per issued instruction against 0.01",
                  "0.23 against 0.10", "6.3 million global loads and 12.6 million shared stores",
                  "the same 68.7 billion FFMAs", "254 registers per thread to rung 5's 217"):
        assert claim in text, claim
    assert "88% of cycles" not in text                                                  # the older, other run's figure


def test_chapter_6_states_the_h200s_counters_beside_the_h100s():
    """The H200's run of the same measurement (data/fp32-gap-*.json): the sweep's range and the
    figures chapter 6 gives for it, with the same shape and stalls as the H100's."""
    text = prose(CH6)
    (run,) = [r for r in tuning.fp32_gaps() if r.device == "NVIDIA H200"]

    def value(who, metric):
        return tuning.gap_value(run, who, metric)
    timed = [r for r in run.records if r.frac_cublas is not None]
    others = sorted(round(r.frac_cublas, 2) for r in timed if r is not run.best)
    assert (others[0], others[-1]) == (0.86, 0.89) and "0.86 to 0.89 on the H200" in text
    assert run.best.frac_cublas < 0.95 and (run.best.config["TM"], run.best.config["TN"]) == (4, 4)
    issue = [value(w, "smsp__issue_active.avg.pct_of_peak_sustained_active") for w in ("cublas", "rung5")]
    fma = [value(w, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active") for w in ("cublas", "rung5")]
    times = [value(w, "gpu__time_duration.sum") for w in ("cublas", "rung5")]
    said = (f"{round(issue[0])}% of cycles against {issue[1]:.1f}%, {fma[0]:.1f}% against {fma[1]:.1f}%, "
            f"ratios {fma[1] / fma[0]:.2f} and {times[0] / times[1]:.2f}")
    assert said == "89% of cycles against 78.5%, 79.1% against 72.0%, ratios 0.91 and 0.90" and said in text
    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    assert [value(w, stall.format("wait")) for w in ("rung5", "cublas")] == [0.16, 0.01]
    assert [value(w, stall.format("dispatch_stall")) for w in ("rung5", "cublas")] == [0.23, 0.10]
    assert [value(w, "launch__registers_per_thread") for w in ("cublas", "rung5")] == [254, 217]
    assert round(value("rung5", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") / 1e9, 1) == 68.7
