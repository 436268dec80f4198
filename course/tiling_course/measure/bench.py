"""The book's benchmark: every matmul kernel of the book, checked against cuBLAS and timed.

    python -m tiling_course.measure.bench                 # sizes 128 to 8192 and three rectangles
    python -m tiling_course.measure.bench --quick         # well under a minute on a GPU
    python -m tiling_course.measure.bench --shapes 1000x500x3000   # M x N x K: P[1000x500] = M[1000x3000] N[3000x500]
    python -m tiling_course.measure.bench --output course/tiling_course/data/h100.json
    python -m tiling_course.measure.bench --backend cpu --sizes 32 64 --tiles 8    # the CPU runtime, a smoke test
    python -m tiling_course.measure.bench --merge main.json small.json --output h200.json   # a session's runs

From Python (the book's live measurements): `bench.measure(sizes=[1024], tiles=[16])`
returns the run as the file holds it: a model.Run of kind "bench" (measure/model.py), each
result a model.Record (config {"tile": T}), the ceilings in its extra.

How each figure is made, so that the book can explain it:
  * Every kernel's product is first compared with the reference library's on the same
    inputs (cuBLAS on a GPU, NumPy on the CPU runtime). A kernel whose largest error,
    relative to the largest entry of the reference product, exceeds 1e-3 is recorded
    with ok=false and not timed: a fast wrong kernel has no speed worth showing.
  * cuBLAS runs in true FP32 (TF32 off), so it does the same arithmetic as the kernels.
  * On a GPU, after one checked launch, the timed launches go straight to CuPy (no
    per-launch argument checks), are timed with CUDA events, and tiny kernels are
    launched in batches so that each timed interval is at least MIN_INTERVAL_MS. The
    launches are queued behind a kernel that holds the GPU busy, so the events time
    the kernels back to back rather than Python issuing them (GpuBackend.elapsed_ms).
    On the CPU runtime the same code runs with a wall-clock timer.
  * TFLOP/s = 2 m n k / time; effective GB/s = 4 (m k + k n + m n) bytes / time (the
    CUDA C Best Practices Guide's effective bandwidth: each matrix read or written once).
  * Ceilings, once per run: the copy bandwidth (bytes read + written by a large
    device-to-device copy) and the FP32 rate (the best cuBLAS rate measured, with an
    8192^3 product added when 8192 is not among the sizes).
"""
import argparse
import platform
import shlex
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from numbers import Integral

import numpy as np

from cudacheck import KernelError, resolve_backend

from .. import matmul
from . import model

# What to measure and measuring it, one step at a time (all of it importable from here too).
from .benchsteps import (  # noqa: F401
    MAX_BATCH,
    MIN_INTERVAL_MS,
    REL_TOLERANCE,
    SEED,
    WARMUP,
    Buffers,
    Step,
    add_fractions,
    compare,
    copy_bandwidth,
    fp32_ceiling,
    measure_kernel,
    measure_reference,
    plan,
    row,
    run_steps,
    time_launches,
)
from .model import Shape

# What this benchmark times beside cuBLAS SGEMM: the FP32 kernels. (The tensor-core kernels
# take 16-bit or TF32 inputs; the tuner (tiling_course.measure.tune) times them at each precision.)
FP32_KERNELS = matmul.FP32_KERNELS

# GpuBackend queues each timed batch of launches behind this kernel, which spins one
# thread for the given number of nanoseconds of the GPU's global timer.
HOLD_KERNEL = r'''
extern "C" __global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
'''
HOLD_BASE_US = 200        # the hold: this, plus this per launch to be queued behind it,
HOLD_PER_LAUNCH_US = 50   # several times what CuPy takes to issue one launch
HOLD_TRIES = 4            # each try holds 4 times longer than the last

# Defaults for each backend: the full set, and --quick (shapes M x N x K). The CPU runtime runs each
# thread as a fiber on a CPU core, so its sets are far smaller.
DEFAULTS = {
    "gpu": dict(sizes=(128, 256, 512, 1024, 2048, 4096, 8192),
                shapes=(Shape(4096, 2048, 1024), Shape(1000, 500, 3000), Shape(2047, 2051, 2049)),
                tiles=(8, 16, 32), repeats=10),
    "cpu": dict(sizes=(64, 128), shapes=(Shape(100, 80, 60),), tiles=(8, 16), repeats=3),
}
QUICK = {
    "gpu": dict(sizes=(256, 512, 1024, 2048), shapes=(Shape(1000, 500, 3000),), tiles=(16, 32), repeats=5),
    "cpu": dict(sizes=(64,), shapes=(), tiles=(16,), repeats=2),
}


# ---------------------------------------------------------------------------------------
# The two backends: the same operations, with CuPy and CUDA events or NumPy and a clock.

class CpuBackend:
    """The CPU runtime, timed by the wall clock; NumPy's matmul is the reference."""
    name = "cpu"
    reference = "numpy"
    copy_bytes = 64 << 20    # enough to leave the CPU's caches
    ceiling_size = None      # no cuBLAS here, so no FP32 ceiling to measure
    tf32 = False

    def __init__(self):
        self.xp = np

    def reference_product(self, M, N, out):
        np.matmul(M, N, out=out)

    def launcher(self, fn, grid, block, args, shared_mem):
        """One launch as a no-argument callable (on the CPU runtime, a checked launch)."""
        return lambda: fn(grid, block, args, shared_mem=shared_mem)

    def synchronize(self):
        """Nothing to wait for: a CPU launch returns when it is done."""

    def elapsed_ms(self, launch, count):
        """Milliseconds for `count` back-to-back launches."""
        start = time.perf_counter()
        for _ in range(count):
            launch()
        return (time.perf_counter() - start) * 1e3

    def device(self):
        from cudacheck import cpu_cores as cores
        return {"name": f"CPU runtime ({platform.processor() or platform.machine()})", "cores": cores()}

    def versions(self):
        return {"cuda_runtime": None, "driver": None, "cupy": None}


class GpuBackend:
    """A CUDA GPU through CuPy, timed with CUDA events; cuBLAS (FP32) is the reference."""
    name = "gpu"
    reference = "cublas"
    copy_bytes = 1 << 30     # far beyond the L2 cache
    ceiling_size = 8192      # a product big enough for cuBLAS to reach its peak

    def __init__(self):
        import cupy

        from .cublas import Cublas
        self.xp = cupy
        # The reference is cuBLAS's sgemm in its default math mode (true FP32) rather than
        # cupy.matmul, whose choice of TF32 (10-bit mantissas) depends on CUPY_TF32 at the
        # process's first product.
        self._blas = Cublas()
        self.tf32 = self._blas.tf32
        self._hold = cupy.RawKernel(HOLD_KERNEL, "hold")

    def reference_product(self, M, N, out):
        """out = M @ N by cuBLAS's sgemm (see cublas.py)."""
        self._blas.gemm(M, N, out, "fp32")

    def launcher(self, fn, grid, block, args, shared_mem):
        """One launch as a no-argument callable, without the checks and the synchronization
        of a normal call (those ran once already); args are already CuPy arrays and NumPy
        scalars, as matmul.arguments returns them."""
        return fn.launcher(grid, block, args, shared_mem)

    def synchronize(self):
        self.xp.cuda.get_current_stream().synchronize()

    def elapsed_ms(self, launch, count):
        """Milliseconds between CUDA events recorded before and after `count` launches on
        the current stream. A short kernel finishes sooner than Python issues the next
        one (a few microseconds a launch), so the GPU is first held busy by HOLD_KERNEL
        while all of them are queued: the events then time the kernels back to back, not
        Python. If the GPU got to the start event before the last launch was queued, the
        hold was too short; it is lengthened and the interval measured again."""
        cuda = self.xp.cuda
        hold_us = HOLD_BASE_US + HOLD_PER_LAUNCH_US * count
        for _ in range(HOLD_TRIES):
            start, end = cuda.Event(), cuda.Event()
            self._hold((1,), (1,), (np.uint64(hold_us * 1000),))
            start.record()
            for _ in range(count):
                launch()
            end.record()
            queued_in_time = not start.done
            end.synchronize()
            if queued_in_time:
                break
            hold_us *= 4
        return cuda.get_elapsed_time(start, end)

    def device(self):
        cuda = self.xp.cuda
        dev = cuda.Device()
        props = cuda.runtime.getDeviceProperties(dev.id)
        attrs = dev.attributes  # the clocks: CUDA 13 dropped them from the properties
        name = props["name"]
        return {
            "name": name.decode() if isinstance(name, bytes) else name,
            "sm_count": props["multiProcessorCount"],
            "clock_mhz": attrs["ClockRate"] / 1000,
            "memory_clock_mhz": attrs["MemoryClockRate"] / 1000,
            "bus_width_bits": props["memoryBusWidth"],
            "memory_gib": round(props["totalGlobalMem"] / 2**30, 2),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "shared_mem_per_block": props["sharedMemPerBlock"],
            "shared_mem_per_block_optin": props["sharedMemPerBlockOptin"],
            "l2_bytes": props["l2CacheSize"],
        }

    def versions(self):
        runtime = self.xp.cuda.runtime
        return {"cuda_runtime": _cuda_version(runtime.runtimeGetVersion()),
                "driver": _cuda_version(runtime.driverGetVersion()),
                "cupy": self.xp.__version__}


def _cuda_version(v):
    """CUDA's integer version (13020) as "13.2"."""
    return f"{v // 1000}.{v % 1000 // 10}"


def make_backend(backend="auto"):
    """The backend object for "auto", "gpu" or "cpu" (auto: the GPU when CuPy sees one)."""
    return GpuBackend() if resolve_backend(backend) == "gpu" else CpuBackend()


# ---------------------------------------------------------------------------------------
# The whole run (its steps: benchsteps.py).

def metadata(backend, repeats, command):
    """Where and how the figures were made: the run's model.Meta."""
    device = backend.device()
    return model.Meta(
        device=device.pop("name"), date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), command=command,
        software={**backend.versions(), "numpy": np.__version__, "python": platform.python_version()},
        gpu=device, extra={"backend": backend.name, "repeats": repeats, "tf32": backend.tf32})


def _check_arguments(sizes, shapes, tiles, repeats):
    """ValueError before any work for what no kernel could run."""
    for t in tiles:
        if not (isinstance(t, Integral) and 1 <= t and t * t <= 1024):
            raise ValueError(f"tile {t!r}: a tile x tile block needs 1 <= tile and tile^2 <= 1024 threads")
    for dims in [(s,) for s in sizes] + [tuple(s) for s in shapes]:
        if not all(isinstance(d, Integral) and d >= 1 for d in dims) or len(dims) not in (1, 3):
            raise ValueError(f"{dims!r}: sizes are positive ints and shapes (m, n, k) of them")
    if not (isinstance(repeats, Integral) and repeats >= 1):
        raise ValueError(f"repeats must be a positive int, not {repeats!r}")


def measure(kernels=None, sizes=None, shapes=(), tiles=None, repeats=None, backend="auto", progress=True):
    """Check and time the book's kernels; return the run (a model.Run of kind "bench").

    kernels: names from FP32_KERNELS (default all). sizes: square widths;
    shapes: model.Shape or (m, n, k) tuples (P[m x n] = M[m x k] N[k x n]), for the kernels
    that take them; tiles: tile widths.
    None takes the backend's defaults (DEFAULTS). repeats: timed repeats per result.
    backend: "auto" (the GPU when CuPy sees one), "gpu" or "cpu".
    """
    be = make_backend(backend)
    default = DEFAULTS[be.name]
    kernels = list(FP32_KERNELS) if kernels is None else list(kernels)
    unknown = [k for k in kernels if k not in FP32_KERNELS]
    if unknown:
        raise KeyError(f"no kernel {', '.join(unknown)}; this benchmark's are {', '.join(FP32_KERNELS)} "
                       "(the tensor-core kernels are timed by the tuner (tiling_course.measure.tune), "
                       "at each precision)")
    sizes = default["sizes"] if sizes is None else sizes
    tiles = default["tiles"] if tiles is None else tiles
    repeats = default["repeats"] if repeats is None else repeats
    shapes = [s if isinstance(s, model.Shape) else model.Shape(*s) for s in shapes]
    _check_arguments(sizes, [(s.m, s.n, s.k) for s in shapes], tiles, repeats)
    command = (f"tiling_course.measure.bench.measure(kernels={kernels!r}, sizes={list(sizes)!r}, "
               f"shapes={[str(s) for s in shapes]!r}, tiles={list(tiles)!r}, repeats={repeats}, backend={backend!r})")
    meta = metadata(be, repeats, command)
    results = run_steps(be, plan(be, kernels, sizes, shapes, tiles), repeats, progress)
    ceilings = {"copy_gbs": copy_bandwidth(be, repeats), "fp32_tflops": fp32_ceiling(be, results, repeats)}
    return model.Run("bench", meta, tuple(results), {"ceilings": ceilings})


# ---------------------------------------------------------------------------------------
# The summary table and the command line.

def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def format_summary(run):
    """The results as a text table, then the tiled kernel's speed-up over the naive one
    (naive time / tiled time) at each square size and tile."""
    meta, ceil = run.meta, run.extra["ceilings"]
    lines = [f"{meta.device} ({meta.extra['backend']}), {meta.extra['repeats']} repeats, median times; "
             f"copy {_fmt(ceil['copy_gbs'], '.0f')} GB/s, FP32 {_fmt(ceil['fp32_tflops'], '.2f')} TFLOP/s",
             f"{'kernel':<18} {'tile':>4} {'m x n x k':>16} {'ms':>10} {'TFLOP/s':>8} {'GB/s':>8} {'of cuBLAS':>9}"]
    for r in run.records:
        tile = r.config.get("tile")
        if not r.ok:
            err = "NaN or inf" if r.error is None else f"{r.error:.2e}"
            lines.append(f"{r.kernel:<18} {_fmt(tile, 'd'):>4} {str(r.shape):>16}   wrong, not timed: rel_err {err}")
            continue
        lines.append(f"{r.kernel:<18} {_fmt(tile, 'd'):>4} {str(r.shape):>16} {r.ms:>10.4g} "
                     f"{r.tflops:>8.3g} {r.extra['gbs']:>8.4g} {_fmt(r.frac_cublas, '.3f'):>9}")
    speedups = tiled_speedups(run.records)
    if speedups:
        lines.append("\ntiled speed-up over naive (naive ms / tiled ms)")
        lines.append(f"{'size':>6} {'tile':>4} {'speed-up':>9}")
        lines += [f"{size:>6} {tile:>4} {s:>9.2f}" for (size, tile), s in speedups.items()]
    return "\n".join(lines)


def tiled_speedups(results):
    """{(size, tile): naive time / tiled time} where both ran correctly at a square size."""
    times = {(r.kernel, r.shape.m, r.config.get("tile")): r.ms for r in results if r.ok and r.shape.square}
    return {(size, tile): times[("naive", size, tile)] / ms
            for (kernel, size, tile), ms in times.items()
            if kernel == "tiled" and ("naive", size, tile) in times}


def merge(runs):
    """Several runs of one device and session as the one run the book reads: the records
    concatenated (the first of each kernel, tile and shape kept), the meta and ceilings of the
    first, every command kept (joined by &&)."""
    devices = {r.meta.device for r in runs}
    if len(devices) != 1:
        raise ValueError(f"refusing to merge runs from different devices: {sorted(devices)}")
    seen, records = set(), []
    for run in runs:
        for r in run.records:
            key = (r.kernel, r.config.get("tile"), r.shape)
            if key not in seen:
                seen.add(key)
                records.append(r)
    first = runs[0]
    meta = replace(first.meta, command=" && ".join(r.meta.command for r in runs))
    return replace(first, meta=meta, records=tuple(records), source="live")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m tiling_course.measure.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", nargs="+", choices=FP32_KERNELS, metavar="NAME",
                    help=f"kernels to measure (default all: {', '.join(FP32_KERNELS)}); cuBLAS always runs")
    ap.add_argument("--sizes", nargs="+", type=int, metavar="N", help="square sizes")
    ap.add_argument("--shapes", nargs="+", type=model.shape_argument, metavar="MxNxK",
                    help="rectangular shapes, M x N x K: P[M x N] = M[M x K] N[K x N]")
    ap.add_argument("--tiles", nargs="+", type=int, metavar="T", help="tile widths (blocks of T x T threads)")
    ap.add_argument("--repeats", type=int, help="timed repeats per result (default 10 on a GPU)")
    ap.add_argument("--output", metavar="FILE", help="write the results as JSON to FILE")
    ap.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    ap.add_argument("--merge", nargs="+", metavar="FILE",
                    help="measure nothing: merge these runs of one device into --output (see merge)")
    ap.add_argument("--quick", action="store_true",
                    help="a small set: sizes 256 to 2048, tiles 16 and 32, 5 repeats (on a GPU)")
    return ap.parse_args(argv)


def main(argv=None):
    """The command line: measure, print the summary, write the JSON if asked."""
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse_args(argv)
    if a.merge:
        if not a.output:
            sys.exit("error: --merge needs --output")
        model.write(merge([model.read(path) for path in a.merge]), a.output)
        print(f"wrote {a.output}")
        return
    try:
        backend = resolve_backend(a.backend)
    except KernelError as e:  # --backend gpu where there is none: the message, not a traceback
        sys.exit(f"error: {e}")
    default = (QUICK if a.quick else DEFAULTS)[backend]
    if a.sizes is None and a.shapes is None:  # neither given: the default set, both parts
        sizes, shapes = default["sizes"], default["shapes"]
    else:                                     # either given: exactly what was asked for
        sizes, shapes = a.sizes or (), a.shapes or ()
    run = measure(kernels=a.kernels, sizes=sizes, shapes=shapes, tiles=a.tiles or default["tiles"],
                  repeats=default["repeats"] if a.repeats is None else a.repeats, backend=a.backend)
    command = shlex.join(["python", "-m", "tiling_course.measure.bench", *argv])
    run = replace(run, meta=replace(run.meta, command=command))
    print(format_summary(run))
    if a.output:
        model.write(run, a.output)
        print(f"\nwrote {a.output}")


if __name__ == "__main__":
    main()
