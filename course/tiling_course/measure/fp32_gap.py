"""What cuBLAS's SGEMM does that the FP32 ladder's best rung does not, at 4096^3 (issue 46).

Two parts, in one run on the GPU at hand:

1. A sweep of rung 5 (kernels/ladder5_warptiled.cu) over thread patches the tuner does not
   vary (TM x TN of 4x4, 4x8, 8x4 and 8x8 per warp sub-tile), each timed beside cuBLAS as the
   book times (bench.time_launches), so that the best CUDA C configuration is measured, not
   guessed.
2. Nsight Compute's counters of the best configuration and of cuBLAS's kernel for the same
   product: FMA pipe activity, issue-slot use, the instruction mix, shared-memory traffic
   and bank conflicts, and the stall reasons per issued instruction.

    python -m tiling_course.measure.fp32_gap --json course/tiling_course/data/fp32-gap-h100.json

The counters come from `ncu --clock-control none` (clocks as they are, as the timings)
run on this module's `--launch` mode, which launches one kernel after warm-up launches.
--json writes the run in the one measurement model (measure/model.py, kind "fp32-gap"): a
record per configuration of the sweep at SIZE^3, the best's configuration and the counters in
its extra.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .. import matmul, sources
from . import bench, model, tune
from .cublas import Cublas

SIZE = tune.SIZE
KIND = "ladder5_warptiled"
BASE = dict(BM=128, BN=256, WM=64, WN=64, MINBLOCKS=1)   # the tuner's best block and warp tiles
PATCHES = [dict(TM=4, TN=4, WNITER=2), dict(TM=4, TN=8, WNITER=1), dict(TM=8, TN=4, WNITER=2),
           dict(TM=8, TN=8, WNITER=1)]
WARMUP = 3

# Counters, each with the row label the table prints.
METRICS = {
    "gpu__time_duration.sum": "time (ns)",
    "sm__cycles_elapsed.avg.per_second": "SM clock (Hz)",
    "launch__registers_per_thread": "registers per thread",
    "launch__block_size": "threads per block",
    "launch__grid_size": "blocks",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy (%)",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "FMA pipe active (% of peak)",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active": "FMA-pipe instructions (% of peak)",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue slots used (%)",
    "smsp__inst_executed.sum": "instructions (warp)",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "FFMA (thread)",
    "smsp__inst_executed_op_shared_ld.sum": "shared loads (warp instructions)",
    "smsp__inst_executed_op_shared_st.sum": "shared stores (warp instructions)",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared load bank conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared store bank conflicts",
    "smsp__inst_executed_op_global_ld.sum": "global loads (warp instructions)",
    "lts__t_bytes.sum": "L2 bytes",
    "dram__bytes_read.sum": "DRAM bytes read",
}
STALLS = ["math_pipe_throttle", "mio_throttle", "short_scoreboard", "long_scoreboard", "barrier", "not_selected",
          "wait", "dispatch_stall", "no_instruction", "lg_throttle", "selected", "branch_resolving"]
for _reason in STALLS:
    METRICS[f"smsp__average_warps_issue_stalled_{_reason}_per_issue_active.ratio"] = f"stall: {_reason}"


def inputs(shape, seed=2026):
    """Random M (m x k) and N (k x n) for a model.Shape."""
    import cupy
    rng = np.random.default_rng(seed)
    m, n, k = shape.m, shape.n, shape.k
    M = cupy.asarray(rng.random((m, k), dtype=np.float32) * 2 - 1)
    N = cupy.asarray(rng.random((k, n), dtype=np.float32) * 2 - 1)
    return M, N


def build(configs, arch, tmp):
    """(config, cubin path or None, (registers, spills) or error) for each configuration."""
    source = sources.path(matmul.spec(KIND).file)
    function = matmul.spec(KIND).function

    def one(item):
        i, cfg = item
        path, info = tune.compile_one(source, arch, tune.defines(KIND, cfg, "fp32"), tmp / f"r5-{i}.cubin", function)
        return cfg, path, info
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        return list(pool.map(one, enumerate(configs)))


def launcher(path, cfg, M, N, P):
    import cupy
    fn = cupy.RawModule(path=str(path)).get_function(matmul.spec(KIND).function)
    (m, k), n = M.shape, N.shape[1]
    grid = (-(-n // cfg["BN"]), -(-m // cfg["BM"]))
    return lambda: fn(grid, (tune.threads(cfg),), (M, N, P, np.int32(m), np.int32(k), np.int32(n)))


def sweep(arch, tmp):
    import cupy
    gpu, blas = bench.GpuBackend(), Cublas()
    M, N = inputs(model.Shape.cube(SIZE))
    R = cupy.empty((SIZE, SIZE), np.float32)
    blas.gemm(M, N, R)
    rows = []
    for cfg, path, info in build([{**BASE, **p, "BK": bk} for p in PATCHES for bk in (8, 16)], arch, tmp):
        row = {"config": cfg}
        if path is None:
            row["error"] = info
            rows.append(row)
            print(json.dumps(cfg), "did not build:", info.splitlines()[-1] if info else "", flush=True)
            continue
        row["registers"], row["spill_bytes"] = info
        P = cupy.full((SIZE, SIZE), np.nan, np.float32)
        run = launcher(path, cfg, M, N, P)
        run()
        _, rel = bench.compare(gpu, P, R)
        row["rel_err"] = rel
        if rel is None or rel > 1e-5:
            row["error"] = f"wrong result (relative error {rel})"
        else:
            row["ms"] = tune.ms(gpu, run)
            row["cublas_ms"] = tune.ms(gpu, lambda: blas.gemm(M, N, R))
            row["frac_cublas"] = row["cublas_ms"] / row["ms"]
        rows.append(row)
        print(json.dumps(cfg), {k: v for k, v in row.items() if k != "config"}, flush=True)
    return rows


def launch_once(which, cfg_json, arch):
    """WARMUP launches and one more: the one ncu profiles (--launch-skip WARMUP)."""
    import cupy
    M, N = inputs(model.Shape.cube(SIZE))
    P = cupy.empty((SIZE, SIZE), np.float32)
    if which == "cublas":
        blas = Cublas()
        run = lambda: blas.gemm(M, N, P)   # noqa: E731
    else:
        cfg = json.loads(cfg_json)
        [(_, path, info)] = build([cfg], arch, Path(tempfile.mkdtemp()))
        if path is None:
            sys.exit(f"rung 5 {cfg_json} did not build: {info}")
        run = launcher(path, cfg, M, N, P)
    for _ in range(WARMUP + 1):
        run()
    cupy.cuda.runtime.deviceSynchronize()


def counters(which, cfg):
    """{metric: value} of the profiled launch (the last), and the kernel's name."""
    cmd = ["ncu", "--clock-control", "none", "--launch-skip", str(WARMUP), "--launch-count", "1", "--csv",
           "--metrics", ",".join(METRICS), sys.executable, "-m", "tiling_course.measure.fp32_gap", "--launch", which,
           "--config", json.dumps(cfg)]
    if which == "rung5":
        cmd[1:1] = ["-k", matmul.spec(KIND).function]
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in p.stdout.splitlines() if line.startswith('"')]
    if p.returncode or not lines:
        raise RuntimeError(f"ncu failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    values, name = {}, None
    for rec in csv.DictReader(io.StringIO("\n".join(lines))):
        name = rec["Kernel Name"]
        try:
            values[rec["Metric Name"]] = float(rec["Metric Value"].replace(",", ""))
        except ValueError:
            values[rec["Metric Name"]] = rec["Metric Value"]
    return name, values


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write the sweep, the counters and the run's labels here")
    ap.add_argument("--launch", choices=["rung5", "cublas"], help=argparse.SUPPRESS)
    ap.add_argument("--config", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import cupy
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    if args.launch:
        return launch_once(args.launch, args.config, arch)

    rows = sweep(arch, Path(tempfile.mkdtemp()))
    best = max((r for r in rows if "frac_cublas" in r), key=lambda r: r["frac_cublas"])
    profiles = {}
    for which, cfg in (("rung5", best["config"]), ("cublas", {})):
        name, values = counters(which, cfg)
        profiles[which] = {"kernel": name, "metrics": values}
    print(f"\nbest rung 5: {json.dumps(best['config'])}: {best['frac_cublas']:.3f} of cuBLAS "
          f"({best['ms']:.3f} ms against {best['cublas_ms']:.3f} ms)\n")
    names = [profiles[w]["kernel"] for w in ("rung5", "cublas")]
    print(f"| counter | rung 5 (`{names[0]}`) | cuBLAS (`{names[1]}`) |")
    print("|---|---|---|")
    for metric, label in METRICS.items():
        a, b = (profiles[w]["metrics"].get(metric) for w in ("rung5", "cublas"))
        print(f"| {label} | {a} | {b} |")
    if args.json:
        meta = tune.meta(bench.GpuBackend(), "python -m tiling_course.measure.fp32_gap --json " + args.json)
        version = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout
        meta.software["ncu"] = version.strip().splitlines()[-1]
        model.write(to_run(meta, rows, best, profiles), args.json)


def to_run(meta, rows, best, profiles):
    """The sweep as the model stores it: a Record of rung 5 at SIZE^3 per configuration (ok where
    it built and was right), the best's configuration and the counters in extra."""
    records = []
    for row in rows:
        r = dict(row)
        fields = {key: r.pop(key) for key in ("config", "ms", "cublas_ms", "frac_cublas") if key in r}
        records.append(model.Record(kernel=KIND, shape=model.Shape.cube(SIZE), ok="error" not in row,
                                    error=r.pop("rel_err", None), extra=r, **fields))
    return model.Run("fp32-gap", meta, tuple(records), {"best": best["config"], "profiles": profiles})


if __name__ == "__main__":
    main()
