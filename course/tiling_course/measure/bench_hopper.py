"""On an H100 or H200: the Hopper kernels of kernels/hopper.cu (issue 30) beside cuBLAS.

For each precision (BF16, FP16) and each kernel (matmul_tma_wgmma, matmul_warp_specialized,
matmul_persistent, matmul_clustered, matmul_async_store), and for TF32 matmul_tf32 (float inputs,
already TF32 values), in a process of its own, so that a
kernel that faults or hangs cannot take the others with it (one that runs past --timeout is
stopped, and skipped at the other precisions):
  * cuBLAS (measure/cublas.py, the precision's gemm: float accumulation and a
    float result) is the reference, checked itself against a float64 NumPy product first;
  * the kernel is compiled by NVRTC for sm_90a (-arch=sm_90a -std=c++17, the -D options
    given, -DHOPPER_FP16 for FP16) and its registers, spills and compiler log are printed;
  * correctness first: on a small awkward shape against float64 NumPy (of the same rounded
    inputs), on an awkward shape and on the square one against cuBLAS. The error is
    max |P - R| / (|M| |N|) elementwise: the difference in units of the scale every float
    accumulation error is bounded by; it must be at most TOL_FACTOR * k * 2^-24, twice the
    worst-case bound of each product's float accumulation (real errors are far below it, a
    wrong index gives errors near 1). P starts as NaN, so an element never stored fails;
  * then time: CUDA events around each launch, after --warmup launches, the kernel's and
    cuBLAS's launches alternating, the median of --repeats; TFLOP/s = 2 m n k / time. With
    --timing launch (the default) the stream is idle at each start event, so the host's time
    to submit the launch (tens of microseconds of Python and driver) is in the time; with
    --timing device each launch is queued behind a one-thread kernel that holds the GPU (the
    book's benchmark's way, measure.bench), and the time is the GPU's alone;
Matrices whose rows are not a multiple of 16 bytes (the awkward shapes) are given to the
kernels as padded copies (cudacheck.pad_rows: same values, a row pitch the TMA
accepts) and to cuBLAS as they are. matmul_async_store writes P through a tensor map of its
own (float, boxes of matmul_async_store_box), so its P is allocated with padded rows too.
The clustered kernels (matmul_clustered, matmul_async_store: clusters of 2 blocks, set by the
kernel's __cluster_dims__) get a grid of 2 x whole_waves(pairs of tiles, clusters that fit at once);
the clusters that fit are asked of the driver (cuOccupancyMaxActiveClusters), or taken to be
SMs / 2 where it cannot answer, and the number is printed and recorded. Every launch here
(config, tensor maps, grid) is tiling_course.hopper's, the rule the book's checker and the
tests launch by too. --output writes the run in the one measurement model (measure/model.py, kind
"hopper": a record per kernel, precision and shape, the meta of the command, device, date and
software of the first record): the book's course/tiling_course/data/hopper-*.json, which
measure.hopperdata reads.

    python -m tiling_course.measure.bench_hopper --output $OUT/bench_hopper.json
    python -m tiling_course.measure.bench_hopper -D WS_STAGES=3 -D WS_WG_M=128 -D WS_BN=128 --kernels matmul_persistent
    python -m tiling_course.measure.bench_hopper --precisions bf16 --size 8192 --repeats 50
    python -m tiling_course.measure.bench_hopper --kernels matmul_persistent matmul_clustered matmul_async_store
    python -m tiling_course.measure.bench_hopper -D CL_STAGES=3 -D EPI_BUFS=5 --kernels matmul_async_store
    python -m tiling_course.measure.bench_hopper --timing device --output $OUT/hopper-gpu-time.json

Shapes are written MxNxK: P is M x N, the product's depth K. Tile sizes are kernels/hopper.cu's
macros (K1_BN, K1_STAGES, WS_BN, WS_WG_M, WS_STAGES, GROUP_M, PRODUCER_REGS, CONSUMER_REGS,
CL_STAGES, CL_GROUP_M, EPI_BUFS), set with -D; each kernel's launch configuration is read
back from the compiled module.
"""
import argparse
import datetime
import functools
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from pathlib import Path

# The launch rule of every kernel (its config, maps, grid) is tiling_course.hopper's.
from .. import hopper, sources
from . import model

PROG = "tiling_course.measure.bench_hopper"   # run as python -m PROG; each worker too

KERNELS = hopper.KERNELS
PRECISIONS = hopper.PRECISIONS
TOL_FACTOR = 2.0            # tolerance = TOL_FACTOR * k * 2^-24 of the |M||N| scale


def arguments(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    ap.add_argument("--kernels", nargs="+", choices=KERNELS, default=list(KERNELS))
    ap.add_argument("--size", type=int, default=4096, help="the timed square shape's M = N = K (default 4096)")
    ap.add_argument("--awkward", type=model.shape_argument, default=model.Shape(1000, 1500, 700),
                    help="a shape checked against cuBLAS and timed, MxNxK (default 1000x1500x700)")
    ap.add_argument("--small", type=model.shape_argument, default=model.Shape(129, 250, 77),
                    help="a shape checked against float64 NumPy, MxNxK (default 129x250x77)")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                    help="a macro for kernels/hopper.cu, e.g. -D WS_STAGES=3 (repeatable)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--timeout", type=float, default=90.0,
                    help="seconds one kernel's process may take at one precision (default 90)")
    ap.add_argument("--compiler", choices=("auto", "nvrtc", "rawmodule"), default="auto",
                    help="nvrtc: NVRTC called directly with exactly the options above, its cubin loaded by "
                         "cupy.RawModule(path=...), with ptxas's register report in the log; rawmodule: "
                         "cupy.RawModule(code=..., options=...); auto (default): nvrtc, then rawmodule")
    ap.add_argument("--source", type=Path, default=Path(sources.path("hopper.cu")))
    ap.add_argument("--timing", choices=("launch", "device"), default="launch",
                    help="launch (default, the method of the chapter's tables): events around each launch on "
                         "an idle stream, so the host's time to submit it counts; device: the GPU's time alone, "
                         "each launch queued behind a kernel that holds the GPU, as measure.bench times")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", type=Path, help="write every result as JSON here")
    ap.add_argument("--in-process", action="store_true",
                    help="run every kernel in this process (no isolation, no timeout): for debugging")
    ap.add_argument("--worker", nargs=2, metavar=("KERNEL", "PRECISION"), help=argparse.SUPPRESS)
    ap.add_argument("--worker-output", type=Path, help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    for d in opts.define:
        name = d.split("=", 1)[0]
        if not name.isidentifier():
            ap.error(f"-D {d!r}: a define is NAME or NAME=VALUE")
    return opts


# ---- In a worker: one kernel at one precision ---------------------------------------------

def log(*parts):
    print(*parts, flush=True)


def versions():
    import cupy
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(cupy.cuda.Device().id)
    try:
        nvrtc = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
    except Exception:  # noqa: BLE001 - recorded as unknown
        nvrtc = "unknown"

    def cuda_version(v):
        return f"{v // 1000}.{v % 1000 // 10}"
    return {"device": props["name"].decode(), "compute_capability": f"{props['major']}.{props['minor']}",
            "sm_count": props["multiProcessorCount"], "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "cuda_runtime": cuda_version(rt.runtimeGetVersion()), "cuda_driver": cuda_version(rt.driverGetVersion()),
            "nvrtc": nvrtc, "cupy": cupy.__version__, "python": platform.python_version(),
            "host": platform.node()}


def compile_nvrtc(source, options):
    """NVRTC with exactly these options (and ptxas's report), the cubin loaded by RawModule."""
    import cupy
    from cupy_backends.cuda.libs import nvrtc
    options = options + ("--ptxas-options=-v",)
    prog = nvrtc.createProgram(source, "hopper.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(prog, options)
        except nvrtc.NVRTCError as e:
            raise RuntimeError(f"NVRTC: {e}\n{nvrtc.getProgramLog(prog)}") from None
        log_text = nvrtc.getProgramLog(prog)
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    fd, path = tempfile.mkstemp(suffix=".cubin", prefix="hopper_")
    with os.fdopen(fd, "wb") as f:
        f.write(cubin)
    module = cupy.RawModule(path=path)
    return module, log_text, path


def compile_rawmodule(source, options):
    import cupy
    module = cupy.RawModule(code=source, options=options)
    module.compile()
    return module, "", None


def build(opts, prec, kernel):
    """The compiled module, its kernel and how it was built; raises with the compiler's log."""
    source = opts.source.read_text(encoding="utf-8")
    options = hopper.options(prec, opts.define)
    methods = {"auto": ("nvrtc", "rawmodule"), "nvrtc": ("nvrtc",), "rawmodule": ("rawmodule",)}[opts.compiler]
    failures = []
    for method in methods:
        start = time.perf_counter()
        try:
            module, text, _ = (compile_nvrtc if method == "nvrtc" else compile_rawmodule)(source, options)
            function = module.get_function(kernel)
        except Exception as e:  # noqa: BLE001 - every way of failing is reported, then the next tried
            failures.append(f"[{method}] {type(e).__name__}: {e}")
            log(f"  compile ({method}) failed:\n{failures[-1]}")
            continue
        info = {"method": method, "options": list(options), "seconds": round(time.perf_counter() - start, 2),
                "log": text, "failures": failures}
        return module, function, info
    raise RuntimeError("no way of compiling worked:\n" + "\n".join(failures))


def make_inputs(shape, prec, seed):
    """M, N on the GPU in the precision's device format, and the float32 values they hold, for
    a model.Shape."""
    import cupy

    from .. import precision
    m, n, k = shape.m, shape.n, shape.k
    rs = cupy.random.RandomState(seed)
    x = rs.standard_normal((m, k), dtype=cupy.float32)
    y = rs.standard_normal((k, n), dtype=cupy.float32)
    if prec == "tf32":
        # TF32 values already (float32 with the low 13 mantissa bits zero): the products are
        # then the same whichever way the tensor cores, and cuBLAS, treat the bits TF32 drops.
        x, y = precision.rounded(x, prec), precision.rounded(y, prec)
    M, N = precision.to_device_format(x, prec), precision.to_device_format(y, prec)
    return M, N, precision.rounded(x, prec), precision.rounded(y, prec)


def compare(P, R, scale, k):
    """The error of P against the reference R in units of scale = |M||N| (elementwise)."""
    import cupy
    tol = TOL_FACTOR * k * 2.0 ** -24
    ratio = cupy.abs(P - R) / cupy.maximum(scale, 1e-30)
    ratio = cupy.where(cupy.isnan(ratio), cupy.inf, ratio)          # NaN (never stored) fails
    err = float(ratio.max())
    bad = ratio > tol
    out = {"error": err, "tolerance": tol, "ok": bool(err <= tol), "bad": int(bad.sum())}
    if out["bad"]:
        rows, cols = cupy.nonzero(bad)
        flat = int(ratio.argmax())
        out.update({"worst_at": [flat // P.shape[1], flat % P.shape[1]],
                    "bad_rows": [int(rows.min()), int(rows.max())], "bad_cols": [int(cols.min()), int(cols.max())]})
    return out


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def time_pair(run_a, run_b, warmup, repeats, timing="launch"):
    """Median milliseconds of a and of b, their launches alternating, and what the timing saw.
    CUDA events around each launch. timing "launch": the stream is idle when the start event
    is recorded, so the time includes the host's work to submit the launch (Python, the
    argument packing, the driver call), which differs between a kernel and cuBLAS.
    timing "device": each launch is queued behind the book's benchmark's hold kernel
    (measure.bench.GpuBackend.elapsed_ms), so the events time the GPU alone. The
    host's own time to submit each call (perf_counter, no synchronisation) is returned as
    well, in microseconds."""
    import cupy
    for _ in range(warmup):
        run_a()
        run_b()
    cupy.cuda.Device().synchronize()
    held = None
    if timing == "device":
        from .bench import GpuBackend
        held = GpuBackend()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times, host = ([], []), ([], [])
    for _ in range(repeats):
        for i, run in enumerate((run_a, run_b)):
            def launch(run=run, submit=host[i]):
                t0 = time.perf_counter()
                run()
                submit.append((time.perf_counter() - t0) * 1e6)
            if held is not None:
                times[i].append(held.elapsed_ms(launch, 1))
                continue
            start.record()
            launch()
            end.record()
            end.synchronize()
            times[i].append(cupy.cuda.get_elapsed_time(start, end))
    return median(times[0]), median(times[1]), {"timing": timing, "host_us": [round(median(h), 1) for h in host]}


def tflops(shape, ms):
    return shape.flops / (ms * 1e-3) / 1e12


def worker(opts, kernel, prec, save=None):
    """One kernel at one precision on every shape; returns its record (JSON-able). save(record)
    is called as the record grows, so that a run stopped for hanging still reports its start."""
    save = save or (lambda rec: None)
    import cupy
    import numpy as np

    from .cublas import Cublas

    rec = {"kernel": kernel, "precision": prec, "versions": versions(), "shapes": [], "error": None}
    log(f"== {kernel} {prec} on {rec['versions']['device']}")
    cub = Cublas()
    sm_count = rec["versions"]["sm_count"]
    try:
        module, function, info = build(opts, prec, kernel)
    except Exception as e:  # noqa: BLE001 - reported, and cuBLAS is still measured below
        module = function = None
        rec["error"] = f"compile: {e}"
        log(f"  COMPILE FAILED: {e}")
    if function is not None:
        rec["compile"] = info
        save(rec)
        log(f"  compiled by {info['method']} in {info['seconds']} s, options {' '.join(info['options'])}")
        if info["log"].strip():
            log("  compiler log:\n" + "\n".join("    " + line for line in info["log"].strip().splitlines()))
        cfg = {**hopper.config(module, kernel, log=log), "from": "module"}   # the build's own defines
        rec["config"] = cfg
        attrs = {}
        try:
            attrs = {k: v for k, v in function.attributes.items()}
        except Exception as e:  # noqa: BLE001 - attributes are informative only
            log(f"  (no attributes: {e})")
        rec["attributes"] = attrs
        log(f"  config {cfg}")
        log(f"  registers {attrs.get('num_regs')}, local (spill) bytes {attrs.get('local_size_bytes')}, "
            f"static shared {attrs.get('shared_size_bytes')}, max threads per block "
            f"{attrs.get('max_threads_per_block')}")
        if attrs.get("max_threads_per_block", cfg["threads"]) < cfg["threads"]:
            rec["error"] = (f"launch impossible: {cfg['threads']} threads per block, at most "
                            f"{attrs['max_threads_per_block']} with {attrs.get('num_regs')} registers each")
            log("  " + rec["error"])
            function = None
        else:
            try:
                function.max_dynamic_shared_size_bytes = cfg["smem"]
            except Exception as e:  # noqa: BLE001 - reported; the launch will then fail and say so
                log(f"  setting max_dynamic_shared_size_bytes={cfg['smem']} failed: {e}")
            if kernel in hopper.CLUSTER:
                cfg["max_clusters"], cfg["max_clusters_from"], problem = hopper.max_clusters(function, cfg, sm_count)
                if problem:
                    log(f"  (cuOccupancyMaxActiveClusters: {problem}; assuming SMs / {cfg['cluster']})")
                log(f"  clusters of {cfg['cluster']} at once: {cfg['max_clusters']} ({cfg['max_clusters_from']}; "
                    f"{sm_count} SMs)")

    shapes = [("small", opts.small, "float64"), ("awkward", opts.awkward, "cublas"),
              ("square", model.Shape.cube(opts.size), "cublas")]
    for label, shape, reference in shapes:
        m, n, k = shape.m, shape.n, shape.k
        entry = {"label": label, "shape": asdict(shape), "reference": reference}
        rec["shapes"].append(entry)
        save(rec)
        M, N, Mf, Nf = make_inputs(shape, prec, opts.seed)
        R = cupy.empty((m, n), cupy.float32)
        cub.gemm(M, N, R, prec)
        if reference == "float64":
            exact = Mf.get().astype(np.float64) @ Nf.get().astype(np.float64)
            scale = np.abs(Mf.get()).astype(np.float64) @ np.abs(Nf.get()).astype(np.float64)
            ref, scale = cupy.asarray(exact), cupy.asarray(scale)
            entry["cublas_check"] = compare(R.astype(cupy.float64), ref, scale, k)
            log(f"  {label} m={m} n={n} k={k}: cuBLAS vs float64 error {entry['cublas_check']['error']:.3g} "
                f"(tolerance {entry['cublas_check']['tolerance']:.3g})")
        else:
            ref, scale = R, cupy.abs(Mf) @ cupy.abs(Nf)
        if function is None:
            continue
        P = hopper.output(kernel, m, n, cupy)
        try:
            run = hopper.launcher(function, kernel, cfg, M, N, P, sms=sm_count, clusters=cfg.get("max_clusters"))
            entry["grid"] = list(run.grid)
            run()
            cupy.cuda.Device().synchronize()
        except Exception as e:  # noqa: BLE001 - a failed launch ends this kernel's run
            entry["error"] = f"{type(e).__name__}: {e}"
            rec["error"] = f"{label}: {entry['error']}"
            log(f"  {label} m={m} n={n} k={k}: LAUNCH FAILED: {entry['error']}")
            if "cudaError" in entry["error"] or "CUDA_ERROR" in entry["error"] or "CUDARuntimeError" in entry["error"]:
                break                   # the context may be unusable: stop here
            continue
        check = compare(P.astype(ref.dtype), ref, scale, k)
        entry["check"] = check
        verdict = "ok" if check["ok"] else "WRONG"
        where = "" if check["ok"] else (f", {check['bad']} elements over, worst at {check['worst_at']}, rows "
                                        f"{check['bad_rows']}, columns {check['bad_cols']}")
        log(f"  {label} m={m} n={n} k={k}: {verdict} vs {reference}: error {check['error']:.3g} "
            f"(tolerance {check['tolerance']:.3g}){where}")
        save(rec)
        if label == "small":
            continue
        del ref, scale
        ms, cublas_ms, seen = time_pair(run, functools.partial(cub.gemm, M, N, R, prec), opts.warmup, opts.repeats,
                                        opts.timing)
        entry.update({"ms": ms, "tflops": tflops(shape, ms), "cublas_ms": cublas_ms,
                      "cublas_tflops": tflops(shape, cublas_ms), "ratio": cublas_ms / ms, **seen})
        log(f"  {label} m={m} n={n} k={k}: {ms:.4f} ms, {entry['tflops']:.1f} TFLOP/s; cuBLAS {cublas_ms:.4f} ms, "
            f"{entry['cublas_tflops']:.1f} TFLOP/s; ratio {entry['ratio']:.3f}; timing {seen['timing']}, host "
            f"{seen['host_us'][0]} and {seen['host_us'][1]} us to submit")
        save(rec)
    return rec


def run_worker(opts):
    kernel, prec = opts.worker

    def save(rec):
        if opts.worker_output:
            opts.worker_output.write_text(json.dumps(rec, indent=1, default=str))
    try:
        rec = worker(opts, kernel, prec, save)
    except Exception:  # noqa: BLE001 - the record says what went wrong
        rec = {"kernel": kernel, "precision": prec, "error": traceback.format_exc(), "shapes": []}
        log(rec["error"])
    save(rec)
    return 0


# ---- The parent: every kernel at every precision, each in its own process -----------------

def child(opts, kernel, prec):
    """Runs one worker process; its record, or one saying why there is none."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix=f"{kernel}_{prec}_")
    os.close(fd)
    argv = [sys.executable, "-m", PROG, "--worker", kernel, prec, "--worker-output", path,
            "--size", str(opts.size), "--awkward", str(opts.awkward), "--small", str(opts.small),
            "--warmup", str(opts.warmup), "--repeats", str(opts.repeats), "--compiler", opts.compiler,
            "--source", str(opts.source), "--seed", str(opts.seed), "--timing", opts.timing]
    for d in opts.define:
        argv += ["-D", d]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, timeout=opts.timeout)
        text = Path(path).read_text()
        rec = json.loads(text) if text.strip() else None
        if rec is None:
            rec = {"kernel": kernel, "precision": prec, "shapes": [],
                   "error": f"the worker exited with status {done.returncode} and no record"}
    except subprocess.TimeoutExpired:
        text = Path(path).read_text()           # what the worker had recorded when it was stopped
        rec = json.loads(text) if text.strip() else {"kernel": kernel, "precision": prec, "shapes": []}
        rec["hung"] = True
        rec["error"] = f"stopped after {opts.timeout:.0f} s (a hang: a barrier waited forever?)"
        if rec["shapes"] and "check" not in rec["shapes"][-1]:
            rec["shapes"][-1]["error"] = "hung"
        log(f"  {kernel} {prec}: {rec['error']}")
    finally:
        Path(path).unlink(missing_ok=True)
    rec["wall_seconds"] = round(time.perf_counter() - start, 1)
    return rec


def to_run(records, meta, defines, summary_text):
    """The run as the model stores it (kind "hopper"): a Record per kernel, precision and shape
    (its label "small", "awkward" or "square"; ok and error from its check; cuBLAS's time over
    the kernel's as frac_cublas), and in extra, each kernel's record without its shapes (compile
    log, configuration, attributes, versions, error), the -D defines, the tolerance, the summary."""
    kernels, flat = [], []
    for rec in records:
        kernels.append({key: value for key, value in rec.items() if key != "shapes"})
        for entry in rec.get("shapes", []):
            e = dict(entry)
            check = e.pop("check", None)
            if check is not None:
                e["check"] = {key: value for key, value in check.items() if key not in ("ok", "error")}
            flat.append(model.Record(
                kernel=rec["kernel"], precision=rec["precision"], shape=model.Shape(**e.pop("shape")),
                config=rec.get("config") or {}, ok=bool(check and check["ok"]), ms=e.pop("ms", None),
                tflops=e.pop("tflops", None), cublas_ms=e.pop("cublas_ms", None),
                cublas_tflops=e.pop("cublas_tflops", None), frac_cublas=e.pop("ratio", None),
                error=check.get("error") if check else None, label=e.pop("label"), extra=e))
    return model.Run("hopper", meta, tuple(flat), {"kernels": kernels, "defines": list(defines),
                                                   "tolerance_factor": TOL_FACTOR, "summary": summary_text})


def first_versions(records):
    """The device, date and software of the run: the first record's that has them."""
    return next((r["versions"] for r in records if r.get("versions")), {})


def summary(records, opts):
    meta = first_versions(records)
    lines = ["", "=" * 100,
             f"Hopper kernels beside cuBLAS on {meta.get('device', '?')} (compute capability "
             f"{meta.get('compute_capability', '?')}, {meta.get('sm_count', '?')} SMs), {meta.get('date', '?')}",
             f"CUDA runtime {meta.get('cuda_runtime', '?')}, driver {meta.get('cuda_driver', '?')}, NVRTC "
             f"{meta.get('nvrtc', '?')}, CuPy {meta.get('cupy', '?')}, Python {meta.get('python', '?')}",
             f"defines: {' '.join('-D' + d for d in opts.define) or '(defaults)'}; error = max |P - R| / (|M||N|), "
             f"tolerance {TOL_FACTOR:g} * k * 2^-24"]
    for prec in opts.precisions:
        for label in ("small", "awkward", "square"):
            entries = [(r, next((e for e in r.get("shapes", []) if e["label"] == label), None))
                       for r in records if r["precision"] == prec]
            if not entries:
                continue
            # cuBLAS's row: from a process that timed it, else from any that ran it.
            found = [e for _, e in entries if e is not None]
            ref = next((e for e in found if "cublas_ms" in e), found[0] if found else None)
            rows = []
            if ref is not None:
                cc, t = ref.get("cublas_check"), ref.get("cublas_tflops")
                check = f"{cc['error']:.2g} {'ok' if cc['ok'] else 'WRONG'}" if cc else "reference"
                rows.append(("cuBLAS", check, f"{ref['cublas_ms']:.4f}" if t else "-", f"{t:.1f}" if t else "-",
                             "1.000" if t else "-", ""))
            for r, entry in entries:
                if entry is None:
                    rows.append((r["kernel"], "-", "-", "-", "-", (r.get("error") or "no result").splitlines()[-1]))
                    continue
                c = entry.get("check")
                check = f"{c['error']:.2g} {'ok' if c['ok'] else 'WRONG'}" if c else "-"
                note = entry.get("error") or (r.get("error") if not c else "") or ""
                timed = "ms" in entry
                rows.append((r["kernel"], check, f"{entry['ms']:.4f}" if timed else "-",
                             f"{entry['tflops']:.1f}" if timed else "-", f"{entry['ratio']:.3f}" if timed else "-",
                             note.splitlines()[-1] if note else ""))
            lines.append("")
            where = "" if ref is None else "  m={m} n={n} k={k}".format(**ref["shape"])
            lines.append(f"{prec.upper()}  {label}{where}")
            lines.append(f"  {'kernel':<26}{'check':<16}{'ms':>10}{'TFLOP/s':>10}{'vs cuBLAS':>11}  note")
            for name, check, ms, tf, ratio, note in rows:
                lines.append(f"  {name:<26}{check:<16}{ms:>10}{tf:>10}{ratio:>11}  {note[:60]}")
    lines.append("=" * 100)
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = arguments(argv)
    if opts.worker:
        return run_worker(opts)
    log(f"kernels/hopper.cu: {', '.join(opts.kernels)} at {', '.join(opts.precisions)}; "
        f"defines {opts.define or '(defaults)'}")
    records, hung = [], set()
    for prec in opts.precisions:
        for kernel in (k for k in opts.kernels if (k, prec) in hopper.PAIRS):
            if kernel in hung:
                records.append({"kernel": kernel, "precision": prec, "shapes": [],
                                "error": "skipped: it hung at an earlier precision"})
                continue
            if opts.in_process:
                try:
                    rec = worker(opts, kernel, prec)
                except Exception:  # noqa: BLE001 - recorded
                    rec = {"kernel": kernel, "precision": prec, "shapes": [], "error": traceback.format_exc()}
                    log(rec["error"])
            else:
                rec = child(opts, kernel, prec)
            if rec.get("hung"):
                hung.add(kernel)
            records.append(rec)
    text = summary(records, opts)
    log(text)
    failed = [f"{r['kernel']} {r['precision']}" for r in records
              if r.get("error") or any(not e.get(key, {"ok": True})["ok"]
                                       for e in r.get("shapes", []) for key in ("check", "cublas_check"))]
    log(f"{len(records) - len(failed)} passed, {len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    if opts.output:
        # The command that wrote it, then the device, date and software it ran on (measure.hopperdata
        # labels the book's tables with them): the first record's.
        meta = model.Meta.of(first_versions(records), command=shlex.join(["python", "-m", PROG, *argv]))
        model.write(to_run(records, meta, opts.define, text), opts.output)
        log(f"wrote {opts.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
