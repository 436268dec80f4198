"""The benchmark's steps (tiling_course.bench runs them): what to measure, in order, and
measuring each one on a backend: the reference library's product and every kernel's, each
checked against it before it is timed, then the run's ceilings. bench.py's docstring says
how each figure is made. Shapes are the model's (model.Shape): m x n x k, P[m x n] = M[m x k] N[k x n];
each result is a model.Record."""
import math
import statistics
import sys
from dataclasses import dataclass, replace

import numpy as np

from .. import matmul
from .model import Record, Shape

REL_TOLERANCE = 1e-3     # largest |kernel - reference| / largest |reference| that counts as correct
MIN_INTERVAL_MS = 0.2    # shortest timed interval; shorter launches are batched up to it
MAX_BATCH = 500          # most launches in one timed interval (CUDA queues about 1000 at most)
WARMUP = 3               # untimed launches before timing (clocks up, caches and code loaded)
SEED = 0                 # inputs are the same on every run


# ---------------------------------------------------------------------------------------
# What to measure.

@dataclass(frozen=True)
class Step:
    """One measurement: a kernel (or the reference library, tile None) at one shape."""
    kernel: str
    tile: int | None
    shape: Shape

    def label(self):
        tile = f" {self.tile}x{self.tile}" if self.tile else ""
        return f"{self.kernel}{tile} {self.shape}"


def _tile_inner(kernel):
    """The Best Practices kernels multiply an m x TILE by a TILE x n matrix."""
    return matmul.spec(kernel).shapes is matmul.Shapes.TILE_INNER


def _takes(kernel, shape, tile):
    try:
        matmul.check_shapes(kernel, shape.m, shape.k, shape.n, tile)   # matmul's order: m, k, n
        return True
    except ValueError:
        return False


def plan(backend, kernels, sizes, shapes, tiles):
    """The steps in order, grouped by shape so each shape's arrays are made once, the
    reference first (every kernel is checked against it). Square sizes and the given
    shapes always get the reference; a kernel gets each that it can multiply, skipping
    the rest (tiled at a size that is not a multiple of the tile, naive off the square).
    The Best Practices kernels get m = n = size, k = tile instead of the square. shapes:
    model.Shape (m, n, k), or (m, n, k) tuples."""
    shapes = [s if isinstance(s, Shape) else Shape(*s) for s in shapes]
    jobs = {shape: [] for shape in [Shape.cube(s) for s in sizes] + shapes}
    candidates = [(Shape(s, s, t) if _tile_inner(k) else Shape.cube(s), k, t)
                  for s in sizes for k in kernels for t in tiles]
    candidates += [(shape, k, t) for shape in shapes for k in kernels for t in tiles]
    for shape, kernel, tile in candidates:
        if _takes(kernel, shape, tile) and (kernel, tile) not in jobs.setdefault(shape, []):
            jobs[shape].append((kernel, tile))
    return [step for shape, kt in jobs.items()
            for step in [Step(backend.reference, None, shape)] + [Step(k, t, shape) for k, t in kt]]


# ---------------------------------------------------------------------------------------
# Measuring.

class Buffers:
    """One shape's arrays, made once and shared by every kernel at that shape: random
    inputs M (m x k) and N (k x n), the kernels' output P, the reference's output R."""

    def __init__(self, backend, shape, rng):
        xp = backend.xp
        self.shape = shape
        m, n, k = shape.m, shape.n, shape.k
        self.M = xp.asarray(rng.random((m, k), dtype=np.float32) * 2 - 1)
        self.N = xp.asarray(rng.random((k, n), dtype=np.float32) * 2 - 1)
        self.P = xp.empty((m, n), dtype=np.float32)
        self.R = xp.empty((m, n), dtype=np.float32)


def time_launches(backend, launch, repeats):
    """Per-launch milliseconds of each repeat, after WARMUP launches. A launch shorter
    than MIN_INTERVAL_MS is repeated within each timed interval (and the interval
    divided), so that timer resolution and event overhead stay small beside it."""
    for _ in range(WARMUP):
        launch()
    backend.synchronize()
    once = backend.elapsed_ms(launch, 1)
    batch = min(MAX_BATCH, max(1, math.ceil(MIN_INTERVAL_MS / max(once, 1e-4))))
    return [backend.elapsed_ms(launch, batch) / batch for _ in range(repeats)]


def compare(backend, P, R):
    """(max |P - R|, that relative to max |R|), or (None, None) when P holds a NaN or an
    infinity: P is filled with NaN before a kernel runs, so an element it never wrote
    shows up here."""
    xp = backend.xp
    err = float(xp.max(xp.abs(P - R)))
    if not math.isfinite(err):
        return None, None
    scale = float(xp.max(xp.abs(R)))
    return err, err / scale if scale else err


def row(step, err, rel, times):
    """One result (a model.Record: config {"tile": T}, or {} for the reference), with the
    figures derived from the median time; frac_cublas is filled in once the shape's cuBLAS
    time is known. times None: the kernel was wrong, untimed. Its extra: the largest absolute
    error, the fastest and slowest repeats, every repeat, the effective GB/s."""
    s = step.shape
    ok = times is not None
    ms = statistics.median(times) if ok else None
    return Record(
        kernel=step.kernel, shape=s, config={} if step.tile is None else {"tile": step.tile}, ok=ok,
        ms=ms, tflops=s.flops / ms / 1e9 if ok else None, error=rel,
        extra={"max_abs_err": err, "ms_min": min(times) if ok else None, "ms_max": max(times) if ok else None,
               "ms_all": list(times) if ok else [],
               "gbs": 4 * (s.m * s.k + s.k * s.n + s.m * s.n) / ms / 1e6 if ok else None})


def measure_reference(backend, buf, step, repeats):
    """The reference library's product into buf.R (which the kernels are checked
    against), then its time."""
    def launch():
        backend.reference_product(buf.M, buf.N, buf.R)
    launch()
    return row(step, 0.0, 0.0, time_launches(backend, launch, repeats))


def measure_kernel(backend, buf, step, repeats):
    """Check the kernel's product against the reference's, then time it if it is right."""
    # matmul.compile caches by source and options: kernels whose tile is not compiled in
    # (naive, tiled_dynamic) are built once for every tile.
    fn = matmul.compile(step.kernel, step.tile, backend.name)
    s = step.shape
    grid, block, shared = matmul.geometry(step.kernel, s.m, s.k, s.n, step.tile)   # matmul's order
    args = matmul.arguments(step.kernel, buf.M, buf.N, buf.P)
    buf.P.fill(np.nan)
    fn(grid, block, args, shared_mem=shared, sync=True)  # checked and waited for: errors surface here
    err, rel = compare(backend, buf.P, buf.R)
    if rel is None or not rel <= REL_TOLERANCE:
        return row(step, err, rel, None)
    return row(step, err, rel, time_launches(backend, backend.launcher(fn, grid, block, args, shared), repeats))


def _progress(steps, enabled):
    """Yield the steps while showing which one runs: a tqdm bar, or one line each
    (on stderr) where tqdm is not installed."""
    if not enabled:
        yield from steps
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        for i, step in enumerate(steps, 1):
            print(f"[{i}/{len(steps)}] {step.label()}", file=sys.stderr, flush=True)
            yield step
        return
    with tqdm(steps, unit="run") as bar:
        for step in bar:
            bar.set_postfix_str(step.label())
            yield step


def run_steps(backend, steps, repeats, progress=True):
    """Every step's result (a model.Record), in order; frac_cublas filled in."""
    rng = np.random.default_rng(SEED)
    results, buf = [], None
    for step in _progress(steps, progress):
        if buf is None or buf.shape != step.shape:
            buf = None  # let the last shape's arrays go before making the next
            buf = Buffers(backend, step.shape, rng)
        measure_step = measure_reference if step.tile is None else measure_kernel
        results.append(measure_step(backend, buf, step, repeats))
    return add_fractions(results)


def add_fractions(results):
    """The results with frac_cublas = cuBLAS time / kernel time at the same shape (1 is
    cuBLAS's speed) where both ran."""
    cublas = {r.shape: r.ms for r in results if r.kernel == "cublas"}
    return [replace(r, frac_cublas=cublas[r.shape] / r.ms) if r.ok and cublas.get(r.shape) else r
            for r in results]


def copy_bandwidth(backend, repeats):
    """GB/s of a copy between two buffers of backend.copy_bytes, counting the bytes read
    and those written: the most a kernel that streams through memory can hope for."""
    xp = backend.xp
    src = xp.ones(backend.copy_bytes // 4, dtype=np.float32)
    dst = xp.empty_like(src)
    ms = statistics.median(time_launches(backend, lambda: xp.copyto(dst, src), repeats))
    return 2 * src.nbytes / ms / 1e6


def fp32_ceiling(backend, results, repeats):
    """The best cuBLAS TFLOP/s of the run; an extra ceiling_size^3 product is timed when
    that size was not measured (small sizes do not fill the GPU). None without cuBLAS."""
    rates = [r.tflops for r in results if r.kernel == "cublas" and r.ok]
    if not rates:
        return None
    size = backend.ceiling_size
    if not any(r.kernel == "cublas" and r.shape == Shape.cube(size) for r in results):
        step = Step("cublas", None, Shape.cube(size))
        buf = Buffers(backend, step.shape, np.random.default_rng(SEED))
        rates.append(measure_reference(backend, buf, step, repeats).tflops)
    return max(rates)
