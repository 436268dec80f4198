"""Search the tunable macros of ladder rungs 5 and 6 and of the tensor-core kernels on the
GPU at hand, against cuBLAS at the same precision measured in the same run.

Every configuration is compiled by nvcc (-arch of the device, in parallel over the CPU's
cores; registers and spills read from ptxas), checked against cuBLAS on an awkward shape
and at the timed size, and timed at SIZE^3 as the book's benchmark times
(bench.time_launches: CUDA events around launches queued behind a hold kernel), each
beside cuBLAS so that clocks drifting over the run touch both alike. Round 1 searches the block and warp
tiles, the slice of k and the pipeline depth; round 2 varies the block order and
MINBLOCKS around the best of round 1. The table printed last is what the book's defaults
come from; --json writes every measurement.

    python -m tiling_course.measure.tune ladder6_pipelined --json out.json
    python -m tiling_course.measure.tune wmma_pipelined --precisions fp16 bf16 tf32
    python -m tiling_course.measure.tune all --json course/tiling_course/data/tuning-h100.json   # the book's data
    python -m tiling_course.measure.tune --ceiling    # the most anything written with wmma multiplies here
    python -m tiling_course.measure.tune ladder5_warptiled --once '{"BM": 128, ...}' --shape 4096x4096x4096

--json writes the run in the one measurement model (measure/model.py, kind "tuning"): a record
per configuration and precision, at SIZE^3, each beside cuBLAS; shapes are M x N x K.

It ships in the package, so a reader with the installed wheel (Colab) can tune for the GPU
at hand; it needs nvcc, which Colab's GPU runtimes have.
"""
import argparse
import functools
import itertools
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .. import matmul, precision, sources
from . import bench, model
from .cublas import Cublas

SIZE = 4096
REPEATS = 15      # timed launches of each configuration, and of cuBLAS beside it
CHECK_SHAPE = model.Shape(1000, 1003, 999)      # M x N x K, awkward in every dimension
TIMED_SHAPE = model.Shape.cube(SIZE)


def ladder6_round1():
    tiles = [  # BM, BN, WM, WN, WNITER, MINBLOCKS
        (128, 128, 32, 64, 2, 2), (128, 128, 64, 32, 1, 2), (128, 128, 64, 64, 2, 2), (128, 128, 64, 64, 2, 1),
        (128, 256, 64, 64, 2, 1), (256, 128, 64, 64, 2, 1), (64, 128, 32, 64, 2, 4), (128, 64, 64, 32, 1, 4),
    ]
    for (bm, bn, wm, wn, wniter, minb), bk, stages in itertools.product(tiles, (8, 16, 32), (2, 3, 4)):
        yield dict(BM=bm, BN=bn, WM=wm, WN=wn, WNITER=wniter, MINBLOCKS=minb, BK=bk, STAGES=stages, GROUP=8)


def ladder5_round1():
    """Rung 5's own macros (static shared memory: configurations over 48 KiB fail to build)."""
    seen = []
    for cfg in ladder6_round1():
        cfg = {key: v for key, v in cfg.items() if key not in ("STAGES", "GROUP")}
        if cfg not in seen and cfg["BK"] <= 16:
            seen.append(cfg)
            yield cfg


def ladder6_round2(best):
    for group, minb in itertools.product((1, 4, 16), sorted({best["MINBLOCKS"], 1})):
        yield {**best, "GROUP": group, "MINBLOCKS": minb}


def wmma_round1():
    tiles = [(128, 128, 64, 32), (128, 128, 32, 64), (128, 128, 64, 64), (128, 256, 64, 64), (256, 128, 64, 64),
             (64, 128, 32, 32)]
    for (bm, bn, wm, wn), bk_bytes, stages in itertools.product(tiles, (64, 128), (2, 3, 4, 5)):
        yield dict(BM=bm, BN=bn, WM=wm, WN=wn, BK_BYTES=bk_bytes, STAGES=stages)


def wmma_tiled_round1():
    """The tiled tensor-core kernel has no macros: one configuration, its fixed 64 x 64
    tile of 2 x 2 warps (the keys size its launch; the kernel ignores them)."""
    yield dict(BM=64, BN=64, WM=32, WN=32)


# The book's kernel (matmul.KERNELS: source, function, precisions) -> the configurations of
# round 1, and a function of the best of round 1 giving round 2's (or None).
KINDS = {
    "ladder5_warptiled": (ladder5_round1, None),
    "ladder6_pipelined": (ladder6_round1, ladder6_round2),
    "wmma_tiled": (wmma_tiled_round1, None),
    "wmma_pipelined": (wmma_round1, None),
}


def defines(kind, cfg, prec):
    """The -D options of a configuration at a precision (BK_BYTES: k per slice in bytes)."""
    elem = precision.ITEMSIZE[prec]
    if kind == "wmma_tiled":
        return list(precision.DEFINES[prec])
    opts = [f"-D{key}={value}" for key, value in cfg.items() if key != "BK_BYTES"]
    if "BK_BYTES" in cfg:
        opts.append(f"-DBK={cfg['BK_BYTES'] // elem}")
    opts += list(precision.DEFINES[prec])
    return opts


def shared_bytes(kind, cfg, prec):
    """Dynamic shared memory of a configuration (0 where it is all static)."""
    return matmul.pipeline_shared_bytes(kind, prec, **cfg) if matmul.spec(kind).pipelined else 0


def threads(cfg):
    return 32 * (cfg["BM"] // cfg["WM"]) * (cfg["BN"] // cfg["WN"])


def compile_one(src, arch, opts, out, function):
    """nvcc -cubin; (path, (registers, spill bytes) of `function`) or (None, error text).
    ptxas reports every kernel of the file; only `function`'s lines count."""
    cmd = ["nvcc", f"-arch={arch}", "-O3", "-cubin", "-Xptxas", "-v", "-o", str(out), *opts, str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr[-600:]
    report = p.stderr.split(f"Function properties for {function}\n", 1)[-1].split("Compiling entry function", 1)[0]
    regs = re.search(r"Used (\d+) registers", report)
    spills = re.search(r"(\d+) bytes spill stores", report)
    return out, (int(regs[1]) if regs else None, int(spills[1]) if spills else 0)


# The ceiling of wmma (kernels/wmma_ceiling.cu): k of one mma_sync at each precision, and
# how many each accumulator of each warp runs in one launch (about 10 ms on an H100: long
# enough that starting and draining the GPU costs well under 1%).
FRAG_K = {"fp16": 16, "bf16": 16, "tf32": 8}
CEILING_ITERATIONS = 20000
CEILING_WARPS_PER_BLOCK = 4


def ceiling(gpu, arch, tmp):
    """TFLOP/s of kernels/wmma_ceiling.cu at each tensor-core precision, with 4, 8 and 16 warps
    per multiprocessor: the most anything written with wmma can multiply on this GPU.
    {precision: {warps per multiprocessor: TFLOP/s}}."""
    import cupy
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    values = np.random.default_rng(0).uniform(-1e-3, 1e-3, 1536).astype(np.float32)
    rates = {}
    for prec in matmul.TENSOR_CORE_PRECISIONS:
        path, info = compile_one(sources.path("wmma_ceiling.cu"), arch, list(precision.DEFINES[prec]),
                                 tmp / f"ceiling-{prec}.cubin", "wmma_ceiling")
        if path is None:
            raise RuntimeError(f"kernels/wmma_ceiling.cu did not compile for {arch}:\n{info}")
        fn = cupy.RawModule(path=str(path)).get_function("wmma_ceiling")
        src = cupy.asarray(precision.to_device_format(values, prec))
        rates[prec] = {}
        for warps in (4, 8, 16):
            blocks = sms * warps // CEILING_WARPS_PER_BLOCK
            out = cupy.empty(blocks * CEILING_WARPS_PER_BLOCK * 2048, cupy.float32)
            launch = functools.partial(fn, (blocks,), (32 * CEILING_WARPS_PER_BLOCK,),
                                       (src, out, np.int32(CEILING_ITERATIONS)))
            flops = blocks * CEILING_WARPS_PER_BLOCK * CEILING_ITERATIONS * 8 * 2 * 16 * 16 * FRAG_K[prec]
            rates[prec][warps] = flops / ms(gpu, launch) / 1e9
            print(f"wmma ceiling {prec}, {warps:2} warps per multiprocessor: {rates[prec][warps]:6.1f} TFLOP/s",
                  flush=True)
    return rates


def meta(gpu, command=""):
    """Device, date and software versions, as the book labels every number: a model.Meta."""
    import datetime
    import platform
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return model.Meta.of({
        "device": gpu.device()["name"], "date": datetime.date.today().isoformat(), **gpu.versions(),
        "nvcc": next((line for line in nvcc if "release" in line), None), "numpy": np.__version__,
        "python": platform.python_version(), "cublas_math": "default (TF32 off for FP32)",
        "timing": f"median of {REPEATS} timed launches after {bench.WARMUP} warm-up ones (bench.time_launches)"},
        command=command)


def record(rec, shape=TIMED_SHAPE):
    """One configuration's measurement (the tuner's dict: kernel, precision, config, registers,
    spill_bytes, rel_err by shape, ok, ms, cublas_ms, ...) as a model.Record at `shape`, the
    timed one; its error the largest of rel_err's (None where a product held a NaN)."""
    r = dict(rec)
    rel = r.pop("rel_err", None)
    known = ("kernel", "precision", "config", "ok", "ms", "cublas_ms", "frac_cublas", "tflops", "cublas_tflops")
    fields = {key: r.pop(key) for key in known if key in r}
    if rel is not None:
        r["rel_err"] = rel
    errors = list(rel.values()) if isinstance(rel, dict) else [rel]
    error = None if rel is None or None in errors else max(errors)
    return model.Record(shape=shape, error=error, **{"ok": False, **fields}, extra=r)


def ms(gpu, launch):
    """Milliseconds per launch, measured as the book's benchmark measures (bench.time_launches)."""
    return statistics.median(bench.time_launches(gpu, launch, REPEATS))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kinds", nargs="*", choices=[*KINDS, "all"])
    ap.add_argument("--ceiling", action="store_true", help="time the ceiling of wmma instead (kernels/wmma_ceiling.cu)")
    ap.add_argument("--precisions", nargs="*", help="default: every precision the kernel offers")
    ap.add_argument("--json")
    ap.add_argument("--top", type=int, default=3, help="configurations carried to the other precisions")
    ap.add_argument("--once", metavar="CONFIG", help="run this configuration (JSON) once, for a profiler")
    ap.add_argument("--shape", type=model.shape_argument, default=TIMED_SHAPE,
                    help="the --once run's shape, MxNxK (default SIZE^3)")
    args = ap.parse_args(argv)
    command = shlex.join(["python", "-m", "tiling_course.measure.tune", *(sys.argv[1:] if argv is None else argv)])
    if not args.kinds and not args.ceiling:
        ap.error("name the kernels to tune (or all), or ask for --ceiling")
    import cupy

    kinds = list(KINDS) if "all" in args.kinds else args.kinds
    dev = cupy.cuda.Device()
    arch = f"sm_{dev.compute_capability}"
    optin = dev.attributes["MaxSharedMemoryPerBlockOptin"]
    gpu, blas = bench.GpuBackend(), Cublas()
    rng = np.random.default_rng(2026)
    tmp = Path(tempfile.mkdtemp())
    records, failed = [], []

    if args.ceiling:
        rates = ceiling(gpu, arch, tmp)
        if args.json:
            model.write(model.Run("tuning", meta(gpu, command), (), {"wmma_ceiling_tflops": rates}), args.json)
        return

    def inputs(shape, prec):
        m, n, k = shape.m, shape.n, shape.k
        M = rng.random((m, k), dtype=np.float32) * 2 - 1
        N = rng.random((k, n), dtype=np.float32) * 2 - 1
        return cupy.asarray(precision.to_device_format(M, prec)), cupy.asarray(precision.to_device_format(N, prec))

    def load(kind, cfg, prec, path):
        fn = cupy.RawModule(path=str(path)).get_function(matmul.spec(kind).function)
        fn.max_dynamic_shared_size_bytes = shared_bytes(kind, cfg, prec)
        return fn

    def launch(fn, kind, cfg, prec, M, N, P):
        (m, k), n = M.shape, N.shape[1]
        grid = (-(-n // cfg["BN"]), -(-m // cfg["BM"]))
        fn(grid, (threads(cfg),), (M, N, P, np.int32(m), np.int32(k), np.int32(n)),
           shared_mem=shared_bytes(kind, cfg, prec))

    def evaluate(kind, configs, prec, data):
        configs = [c for c in configs if shared_bytes(kind, c, prec) <= optin]
        jobs = [(c, tmp / f"{kind}-{prec}-{len(records) + i}.cubin") for i, c in enumerate(configs)]
        source = sources.path(matmul.spec(kind).file)
        with ThreadPoolExecutor(os.cpu_count()) as pool:
            function = matmul.spec(kind).function
            built = list(pool.map(lambda j: compile_one(source, arch, defines(kind, j[0], prec), j[1], function),
                                  jobs))
        for (cfg, _), (path, info) in zip(jobs, built):
            rec = {"kernel": kind, "precision": prec, "config": cfg}
            records.append(rec)
            if path is None:
                rec["error"] = info
                continue
            rec["registers"], rec["spill_bytes"] = info
            if failed:
                rec["error"] = "not run: an earlier configuration faulted"
                continue
            try:
                measure(load(kind, cfg, prec, path), kind, cfg, rec, data)
            except (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError) as e:   # context lost
                rec["error"] = str(e)
                failed.append(cfg)
                print(f"{kind} {prec} {json.dumps(cfg)} FAULTED: {e}", flush=True)
        return [r for r in records if r["kernel"] == kind and r["precision"] == prec and r.get("ok")]

    def measure(fn, kind, cfg, rec, data):
        prec = rec["precision"]
        ok = True
        for shape, (M, N, R) in data.items():
            P = cupy.full((shape.m, shape.n), np.nan, np.float32)
            launch(fn, kind, cfg, prec, M, N, P)
            _, rel = bench.compare(gpu, P, R)      # None where P holds a NaN: an element never written
            ok &= rel is not None and rel <= precision.TOLERANCE[prec]
            rec.setdefault("rel_err", {})[str(shape)] = rel
        rec["ok"] = ok
        if not ok:
            return
        M, N, R = data[TIMED_SHAPE]
        P = cupy.empty((SIZE, SIZE), np.float32)
        kernel_ms = ms(gpu, lambda: launch(fn, kind, cfg, prec, M, N, P))
        cublas_ms = ms(gpu, lambda: blas.gemm(M, N, R, prec))
        rec.update(ms=kernel_ms, cublas_ms=cublas_ms, frac_cublas=cublas_ms / kernel_ms,
                   tflops=2 * SIZE**3 / kernel_ms / 1e9, cublas_tflops=2 * SIZE**3 / cublas_ms / 1e9)
        print(f"{kind} {prec} {json.dumps(cfg)} regs {rec['registers']} spill {rec['spill_bytes']} "
              f"{rec['tflops']:.1f} TFLOP/s  {rec['frac_cublas']:.3f} of cuBLAS", flush=True)

    if args.once:   # one launch, for `ncu python -m tiling_course.measure.tune KIND --once '{...}'`
        kind, cfg = kinds[0], json.loads(args.once)
        prec = (args.precisions or matmul.spec(kind).precisions)[0]
        path, info = compile_one(sources.path(matmul.spec(kind).file), arch, defines(kind, cfg, prec),
                                 tmp / "once.cubin", matmul.spec(kind).function)
        M, N = inputs(args.shape, prec)
        P = cupy.empty((args.shape.m, args.shape.n), np.float32)
        launch(load(kind, cfg, prec, path), kind, cfg, prec, M, N, P)
        cupy.cuda.runtime.deviceSynchronize()
        print("registers, spill bytes:", info)
        return

    summary = []
    for kind in kinds:
        round1, round2 = KINDS[kind]
        best_configs = None
        for prec in args.precisions or matmul.spec(kind).precisions:
            data = {}
            for shape in (CHECK_SHAPE, TIMED_SHAPE):
                M, N = inputs(shape, prec)
                R = cupy.empty((shape.m, shape.n), np.float32)
                blas.gemm(M, N, R, prec)
                data[shape] = (M, N, R)
            configs = list(round1()) if best_configs is None else best_configs
            good = sorted(evaluate(kind, configs, prec, data), key=lambda r: -r["frac_cublas"])
            if round2 and good and not failed:
                seen = [r["config"] for r in good]
                extra = [c for c in round2(good[0]["config"]) if c not in seen]
                good = sorted(good + evaluate(kind, extra, prec, data), key=lambda r: -r["frac_cublas"])
            if best_configs is None:
                best_configs = [r["config"] for r in good[:args.top]]
            summary += good[:args.top]

    print(f"\n{gpu.device()['name']}, {SIZE}^3, cuBLAS at the same precision timed beside each configuration")
    for r in summary:
        print(f"  {r['kernel']:18} {r['precision']:5} {r['tflops']:6.1f} TFLOP/s  {r['frac_cublas']:.3f}"
              f"  regs {r['registers']}  {json.dumps(r['config'])}")
    if args.json:
        model.write(model.Run("tuning", meta(gpu, command), tuple(record(r) for r in records)), args.json)


if __name__ == "__main__":
    main()
