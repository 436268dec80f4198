"""Chapter 9's Hopper kernels (kernels/hopper.cu): the one way each is launched, on an H100 or
H200 or on the CPU runtime, and what scripts/bench_hopper.py measured of them on each GPU:
timed on the GPU alone (--timing device: data/hopper-h100-gpu-time.json, hopper-h200-gpu-time.json),
the chapter's tables, and timed from the launch (data/hopper-h100.json, hopper-h200.json), where
the host's time to submit a launch is the point.

    from tiling_course import hopper
    P, fn = hopper.run(M, N, "matmul_persistent", "bf16", backend="cpu")   # float32 in, float32 P
    hopper.table(); hopper.plot()                   # the stored GPU-time runs beside cuBLAS
    hopper.datasets()[0].ratio("matmul_persistent", "bf16")     # a number the chapter quotes

The launch rule lives here alone (hopper.cu's header comment states it): the benchmark, the
tests and the checker (tasks.HopperMatmul) all launch through `launch` or `launcher`.
"""
import ctypes
import json
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from cudacheck import gpu_available, pad_rows, tensor_map_2d

# Not style or perfplots: tryout imports this module (through tasks) and stays matplotlib-free;
# table and plot import them where they are called.
from . import magic, matmul, perfdata, precision, show, sources

FILE = "hopper.cu"
# In the chapter's order: each kernel one step from the one before.
KERNELS = ("matmul_tma_wgmma", "matmul_warp_specialized", "matmul_persistent", "matmul_clustered",
           "matmul_async_store", "matmul_tf32")
PRECISIONS = ("bf16", "fp16", "tf32")
# The precisions each kernel multiplies in: the 16-bit kernels read both tiles from shared
# memory, matmul_tf32 reads N's from registers (wgmma takes TF32 from shared memory K-major only).
KERNEL_PRECISIONS = {k: ("tf32",) if k == "matmul_tf32" else ("bf16", "fp16") for k in KERNELS}
# Every kernel at each of its precisions, in the order scripts/bench_hopper.py runs and stores them.
PAIRS = tuple((k, p) for p in PRECISIONS for k in KERNELS if p in KERNEL_PRECISIONS[k])
# wgmma and setmaxnreg exist on sm_90a only, not on plain sm_90.
ARCH_OPTIONS = ("-arch=sm_90a", "-std=c++17")
# Blocks per cluster, fixed by the kernels' __cluster_dims__ (hopper.cu's CLUSTER): each
# cluster walks pairs of tiles, one above the other.
CLUSTER = {"matmul_clustered": 2, "matmul_async_store": 2}
# Kernels that store P through a tensor map of it, passed in place of P: the {rows, columns}
# of its boxes where the module has no <kernel>_box to say so (hopper.cu's EPI_ROWS, EPI_COLS).
P_BOX = {"matmul_async_store": (64, 32)}
# Kernels whose grid is one block per SM, each walking tiles.
PERSISTENT = ("matmul_persistent", "matmul_tf32")
# "SMs" of the CPU runtime: a persistent grid that small makes a block walk several tiles
# (its slots' phases running on across them) on shapes small enough to run checked.
CPU_SMS = 2
# The runs timed on the GPU alone (bench_hopper.py --timing device: each launch queued behind a
# one-thread kernel, so no host time is in it): the chapter's tables and figure, H100 first.
FILES = ("hopper-h100-gpu-time.json", "hopper-h200-gpu-time.json")
# The same kernels timed from the launch (bench_hopper.py's default, --timing launch): the host's
# tens of microseconds to submit each launch are in the time. Only where that is the point.
LAUNCH_FILES = ("hopper-h100.json", "hopper-h200.json")
TIMINGS = {"device": FILES, "launch": LAUNCH_FILES}
TIMED = ("square", "awkward")       # the timed shapes of a run, as bench_hopper.py labels them


def require(kernel, prec):
    """KeyError for a kernel hopper.cu does not have, ValueError for a precision it does not
    multiply in."""
    if kernel not in KERNELS:
        raise KeyError(f"no kernel {kernel!r} in {FILE}; its kernels are {', '.join(KERNELS)}")
    if prec not in KERNEL_PRECISIONS[kernel]:
        raise ValueError(f"{kernel} multiplies in {' or '.join(KERNEL_PRECISIONS[kernel])}; got precision={prec!r}")


def options(prec="bf16", defines=()):
    """The compiler options of hopper.cu at a precision (BF16 its default, FP16 by
    -DHOPPER_FP16; TF32, matmul_tf32's, needs no option), `defines` ("WS_STAGES=3", ...) between."""
    return ARCH_OPTIONS + tuple(f"-D{d}" for d in defines) + (("-DHOPPER_FP16",) if prec == "fp16" else ())


def compile(kernel, prec="bf16", backend="auto", code=None, check=False):
    """The kernel (a cudacheck RawKernel, its module as .module), compiled once per source,
    precision, backend and mode; `code` replaces hopper.cu (a reader's copy)."""
    require(kernel, prec)
    return matmul.build(code if code is not None else sources.read(FILE), kernel, options(prec), backend, check)


def _ints(module, name, count):
    """A __constant__ int array of the module, read the way both backends' get_global allow."""
    out = np.zeros(count, np.int32)
    module.get_global(name).copy_to_host(out.ctypes.data_as(ctypes.c_void_p), out.nbytes)
    return [int(v) for v in out]


def config(module, kernel, values=None, log=print):
    """What a launch of `kernel` needs, from the module's own `<kernel>_config` array (so any
    -D the module was built with is in it), or from `values` where the caller has them
    otherwise: {threads, block_m, block_n, smem, stages}, with p_box, [rows, columns] of P's
    boxes, for a kernel storing P by TMA (read from `<kernel>_box`, or else P_BOX's, which
    `log` is told), and cluster, its blocks per cluster, for a clustered kernel. A module of
    CuPy or of cudacheck, on either backend."""
    threads, bm, bn, smem, stages = values or _ints(module, f"{kernel}_config", 5)
    cfg = {"threads": threads, "block_m": bm, "block_n": bn, "smem": smem, "stages": stages}
    if kernel in P_BOX:
        try:
            cfg["p_box"] = _ints(module, f"{kernel}_box", 2)
        except Exception as e:  # noqa: BLE001 - each backend and CuPy raise their own
            log(f"  (could not read {kernel}_box: {e}; using {P_BOX[kernel]})")
            cfg["p_box"] = list(P_BOX[kernel])
    if kernel in CLUSTER:
        cfg["cluster"] = CLUSTER[kernel]
    return cfg


def sm_count():
    """The GPU's multiprocessors: a persistent grid's size."""
    import cupy
    return cupy.cuda.Device().attributes["MultiProcessorCount"]


class _LaunchConfig(ctypes.Structure):   # cuda.h's CUlaunchConfig
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


def max_clusters(function, cfg, sms):
    """(clusters of a clustered kernel that fit on the GPU at once, "driver"), as the driver's
    cuOccupancyMaxActiveClusters counts them (the cluster size is the kernel's own, from
    __cluster_dims__, so the query leaves it unspecified); where the driver cannot answer,
    (SMs / cluster, "SMs"). A third value says why the driver did not answer, or is None.
    `function`: CuPy's or cudacheck's GPU kernel."""
    size = cfg["cluster"]
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        query = lib.cuOccupancyMaxActiveClusters
        query.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.POINTER(_LaunchConfig)]
        query.restype = ctypes.c_int
        launch = _LaunchConfig(size * sms, 1, 1, cfg["threads"], 1, 1, cfg["smem"], None, None, 0)
        count = ctypes.c_int(0)
        result = query(ctypes.byref(count), ctypes.c_void_p(function.kernel.ptr), ctypes.byref(launch))
        if result != 0:
            raise RuntimeError(f"cuOccupancyMaxActiveClusters returned CUresult {result}")
    except Exception as e:  # noqa: BLE001 - no driver, no symbol, a refusal: the SMs decide
        return sms // size, "SMs", f"{type(e).__name__}: {e}"
    return (count.value, "driver", None) if count.value >= 1 else (sms // size, "SMs", None)


def whole_waves(units, at_once):
    """The fewest workers that take `units` in as few rounds as `at_once` workers would:
    ceil(units / rounds), rounds = ceil(units / at_once). 512 tiles on 132 SMs take 4 rounds
    either way, and 128 blocks of 4 tiles each finish together, where 132 would leave 16 idle in
    the last round: a grouped walk's rounds then cover whole groups, and fewer blocks share the
    power and the L2 (logs/2026-11-28-h200-held-boxes.md)."""
    rounds = -(-units // at_once)
    return -(-units // rounds) if units else 0


def grid(kernel, cfg, m, n, sms, clusters=None):
    """The grid of `kernel` for an m x n P: a block per tile, ceil(n / BN) x ceil(m / BM);
    matmul_persistent and matmul_tf32, whole_waves(tiles, SMs) blocks, each walking tiles; a
    clustered kernel, its cluster size times whole_waves(pairs of tiles, clusters that fit at
    once (default SMs / size))."""
    tiles_m, tiles_n = -(-m // cfg["block_m"]), -(-n // cfg["block_n"])
    if kernel in CLUSTER:
        size = CLUSTER[kernel]
        pairs = -(-tiles_m // size) * tiles_n          # a cluster's tiles: one above the other
        return (size * whole_waves(pairs, clusters or sms // size),)
    if kernel in PERSISTENT:
        return (whole_waves(tiles_m * tiles_n, sms),)
    return (tiles_n, tiles_m)


def launcher(function, kernel, cfg, M, N, P, *, sms, clusters=None):
    """A function that launches `kernel` on P = M @ N, M and N in the precision's device
    format (uint16 BF16 bits, float16, or float32 for TF32: precision.to_device_format), P
    float32 (for a P_BOX kernel with rows a multiple of 16 bytes: pad_rows), all NumPy (CPU
    runtime) or all CuPy (GPU). The maps, with the 128-byte swizzle, of padded copies where a
    row is not a multiple of 16 bytes: a box of M is BM rows of one 128-byte row each (64
    16-bit values or 32 floats: a slice of k), a box of N that many rows of k by as many
    columns, P's p_box. Its keyword arguments go to the launch (checked mode's trace=);
    `.grid` is the grid. `cfg` is config's."""
    (m, k), n = M.shape, N.shape[1]
    element = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32"}.get(M.dtype, "bf16")
    deep = 128 // M.dtype.itemsize          # values in a swizzled 128-byte row
    # A map keeps its array alive (tmap.source), the padded copies too.
    map_m = tensor_map_2d(pad_rows(M), box_rows=cfg["block_m"], box_cols=deep, element=element)
    map_n = tensor_map_2d(pad_rows(N), box_rows=deep, box_cols=deep, element=element)
    if kernel in P_BOX:
        rows, cols = cfg["p_box"]
        out = tensor_map_2d(P, box_rows=rows, box_cols=cols, element="fp32")
    else:
        out = P
    args = (map_m, map_n, out, np.int32(m), np.int32(k), np.int32(n))
    blocks = grid(kernel, cfg, m, n, sms, clusters)

    def run(**call_options):
        function(blocks, (cfg["threads"],), args, shared_mem=cfg["smem"], **call_options)
    run.grid = blocks
    return run


def output(kernel, m, n, xp=np):
    """P for `kernel`: m x n float32 NaN (an element never stored stays NaN), NumPy or CuPy
    (xp), its rows on multiples of 16 bytes for a kernel whose TMA stores it (P_BOX)."""
    P = xp.full((m, n), np.nan, np.float32)
    return pad_rows(P) if kernel in P_BOX else P


def prepare(module, kernel, M, N, P=None, *, sms=None):
    """`kernel` of `module` (cudacheck's or CuPy's) made ready to run P = M @ N, without
    running it: the dynamic shared memory its config asks for opted into, the clusters that
    fit asked of the driver. Returns (launcher's run, P, the function). P: output's unless
    given. sms: the persistent and clustered grids' SMs (default the GPU's, or CPU_SMS on the
    CPU runtime)."""
    on_cpu = isinstance(M, np.ndarray)
    cfg = config(module, kernel)
    function = module.get_function(kernel)
    function.max_dynamic_shared_size_bytes = cfg["smem"]
    sms = sms or (CPU_SMS if on_cpu else sm_count())
    clusters = max_clusters(function, cfg, sms)[0] if kernel in CLUSTER and not on_cpu else None
    if P is None:
        xp = np
        if not on_cpu:
            import cupy as xp
        P = output(kernel, M.shape[0], N.shape[1], xp)
    return launcher(function, kernel, cfg, M, N, P, sms=sms, clusters=clusters), P, function


def launch(module, kernel, M, N, P=None, *, sms=None, **call_options):
    """Launch `kernel` of `module` on P = M @ N, once (see prepare); returns (P, the function)."""
    run, P, function = prepare(module, kernel, M, N, P, sms=sms)
    run(**call_options)
    return P, function


def run(M, N, kernel="matmul_persistent", prec="bf16", backend="auto", code=None, check=False, *, sms=None,
        **call_options):
    """P = M @ N by `kernel` at precision `prec`, M and N float32 (rounded to the precision
    on the way in, as precision.rounded rounds): NumPy on the CPU runtime, CuPy or
    NumPy (copied) on a GPU. Returns (P, the function, for a checked run's last_launch)."""
    fn = compile(kernel, prec, backend, code, check)
    xp = np
    if fn.backend == "gpu":
        import cupy as xp
    # Rounded first: a TF32 kernel takes floats, and is given TF32 values (what the BF16 and
    # FP16 formats do by themselves), so the product does not hang on what the tensor cores
    # do with the 13 bits TF32 drops.
    M, N = (precision.to_device_format(precision.rounded(xp.asarray(x, dtype=xp.float32), prec), prec)
            for x in (M, N))
    # sync: a teaching call waits for its kernel, so a fault on a GPU stops at this launch, named
    return launch(fn.module, kernel, M, N, sms=sms, sync=True, **call_options)


def runs_here():
    """Whether this machine can run hopper.cu: a GPU that its -arch=sm_90a code runs on
    (compute capability 9.0: the H100, the H200), by the rule %%cuda cells follow."""
    return gpu_available() and not magic.gpu_unfit(ARCH_OPTIONS)


# ---- What the GPUs measured ---------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    """One stored run of scripts/bench_hopper.py (its --output file): `meta` (the command,
    device, date and software), `records` (a kernel at a precision each, in the order run:
    the chapter's), `source` (the file's name)."""
    meta: dict
    records: list = field(repr=False)
    source: str

    @property
    def device(self):
        return self.meta["device"]

    @property
    def date(self):
        return self.meta["date"][:10]

    @property
    def timing(self):
        """"device" (timed on the GPU alone) or "launch" (the host's submission in the time), as
        bench_hopper.py recorded it in each timed entry; "launch" in a file from before it did."""
        found = {e.get("timing", "launch") for r in self.records for e in r.get("shapes", []) if "ms" in e}
        assert len(found) <= 1, f"{self.source} mixes timings: {found}"
        return found.pop() if found else "launch"

    @property
    def label(self):
        m = self.meta
        how = "GPU time" if self.timing == "device" else "launch time"
        kernels = f", {m['kernels']}" if m.get("kernels") else ""
        return (f"{m['device']}, measured {self.date}, {how} (CUDA runtime {m['cuda_runtime']}, driver "
                f"{m['cuda_driver']}, NVRTC {m['nvrtc']}, CuPy {m['cupy']}{kernels})")

    @property
    def kernels(self):
        return list(dict.fromkeys(r["kernel"] for r in self.records))

    @property
    def precisions(self):
        return list(dict.fromkeys(r["precision"] for r in self.records))

    def record(self, kernel, prec):
        """The record of `kernel` at `prec`, or None."""
        return next((r for r in self.records if (r["kernel"], r["precision"]) == (kernel, prec)), None)

    def entry(self, kernel, prec, shape="square"):
        """The record's entry for one shape ("small", "awkward", "square"), or None."""
        return next((e for e in (self.record(kernel, prec) or {}).get("shapes", []) if e["label"] == shape), None)

    def _timed(self, kernel, prec, shape, key):
        e = self.entry(kernel, prec, shape)
        return e.get(key) if e and e.get("check", {}).get("ok") else None

    def ratio(self, kernel, prec, shape="square"):
        """cuBLAS's time over the kernel's (above 1: faster than cuBLAS), both timed in the
        same process; None where the kernel was not timed or computed a wrong product."""
        return self._timed(kernel, prec, shape, "ratio")

    def tflops(self, kernel, prec, shape="square"):
        """The kernel's TFLOP/s, 2 m n k / its median time; None as for ratio."""
        return self._timed(kernel, prec, shape, "tflops")

    def cublas_tflops(self, kernel, prec, shape="square"):
        """cuBLAS's TFLOP/s at the precision, timed beside `kernel` (each kernel's process
        times it anew, so it differs a little between kernels)."""
        e = self.entry(kernel, prec, shape)
        return e.get("cublas_tflops") if e else None

    def size(self, shape="square"):
        """The shape's name as the chapter writes it: 4096^3, 1000x1500x700 (M x N x K)."""
        e = next(e for r in self.records for e in r.get("shapes", []) if e["label"] == shape)
        m, n, k = (e["shape"][d] for d in "mnk")
        return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"

    def checks(self, kernel, prec):
        """(every shape's product right, the largest error in units of |M||N|, how many
        shapes were checked); a run that failed to compile, launch or finish is not right."""
        r = self.record(kernel, prec) or {}
        checked = [e["check"] for e in r.get("shapes", []) if "check" in e]
        ok = bool(checked) and not r.get("error") and all(c["ok"] for c in checked)
        return ok, max((c["error"] for c in checked), default=None), len(checked)


def _measured(name):
    f = perfdata.data_file(name)
    d = json.loads(f.read_text())
    return Measured(d["meta"], d["records"], f.name)


@lru_cache(maxsize=None)
def datasets(timing="device"):
    """The stored runs, H100 first, of those files data/ holds: timed on the GPU alone
    (timing="device", FILES: the chapter's tables) or from the launch ("launch", LAUNCH_FILES).
    Each timed entry also holds the host's microseconds to submit the kernel's and cuBLAS's
    launches ("host_us")."""
    return tuple(_measured(name) for name in TIMINGS[timing] if perfdata.data_file(name).is_file())


def _check_text(run, kernel, prec):
    ok, error, shapes = run.checks(kernel, prec)
    if ok:
        return f"✓ {shapes} shapes, error ≤ {error:.1e}"
    problem = (run.record(kernel, prec) or {}).get("error") or "a wrong product"
    return f"✗ {problem.strip().splitlines()[-1][:60]}"


def table(data=None, gpu=None):
    """Per GPU, precision and kernel (the chapter's order): TFLOP/s and the fraction of
    cuBLAS's speed at the square and the awkward shape, cuBLAS's TFLOP/s timed beside it, and
    the kernel's correctness checks (float64 NumPy on a small shape, cuBLAS on the others).
    gpu: only the runs whose device's name holds it ("H100"), a table that fits a slide."""
    from .perfplots import NoData
    data = [run for run in (datasets() if data is None else data) if gpu is None or gpu in run.device]
    if not data:
        return NoData("the Hopper kernels' table")

    def cell(run, kernel, prec, shape, digits):
        t, r = run.tflops(kernel, prec, shape), run.ratio(kernel, prec, shape)
        return f"{t:.{digits}f} ({r:.2f})" if t else "–"
    rows = []
    for run in data:
        for prec in run.precisions:
            for kernel in (k for k in run.kernels if run.record(k, prec)):
                cublas = [run.cublas_tflops(kernel, prec, s) for s in TIMED]
                rows.append([run.device, prec.upper(), f"<code>{kernel}</code>", cell(run, kernel, prec, "square", 0),
                             cell(run, kernel, prec, "awkward", 1),
                             " / ".join(f"{c:.{d}f}" if c else "–" for c, d in zip(cublas, (0, 1))),
                             _check_text(run, kernel, prec)])
    square, awkward = data[0].size("square"), data[0].size("awkward")
    header = ["GPU", "inputs", "kernel", f"{square}: TFLOP/s (of cuBLAS)", f"{awkward}: TFLOP/s (of cuBLAS)",
              "cuBLAS beside it, TFLOP/s", "checked"]
    return show.table(header, rows, "M x N x K, float accumulation, median times; checked within 2 k 2^-24 |M||N|; "
                                    + "; ".join(run.label for run in data))


def plot(data=None):
    """The fraction of cuBLAS's speed at the square shape of each kernel, in the chapter's
    order, per precision, a panel per GPU, with cuBLAS's line at 1."""
    from . import style
    return style.styled(_plot)(datasets() if data is None else data)


def _plot(data):
    import matplotlib.pyplot as plt

    from . import style
    from .perfplots import NoData
    if not data:
        return NoData("the Hopper kernels' figure")
    if style.for_slides() and len(data) > 1:   # a GPU a slide: six kernels' names side by side
        return [_plot([run]) for run in data]
    # The full width even for one GPU: the title's line of software must fit.
    fig, axes = plt.subplots(1, len(data), figsize=(style.MAX_WIDTH_IN, 4.4), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, run in zip(axes[0], data):
        # Each kernel's bars (its precisions: BF16 and FP16, or TF32) side by side about its tick.
        measured = {k: [p for p in run.precisions if run.record(k, p)] for k in run.kernels}
        w = 0.8 / max(len(v) for v in measured.values())
        for i, prec in enumerate(run.precisions):
            kernels = [k for k in run.kernels if prec in measured[k]]
            x = [run.kernels.index(k) + (measured[k].index(prec) - (len(measured[k]) - 1) / 2) * w for k in kernels]
            ratios = [run.ratio(k, prec) or np.nan for k in kernels]
            bars = ax.bar(x, ratios, w, label=prec.upper(),
                          color=style.PALETTE[i], hatch=style.HATCHES[i % len(style.HATCHES)], edgecolor="white")
            for b, r in zip(bars, ratios):
                if r == r:          # not NaN: a kernel that failed has no bar and no number
                    ax.text(b.get_x() + b.get_width() / 2, r + 0.02, f"{r:.2f}", ha="center", va="bottom",
                            fontsize=9, rotation=90)
        ax.axhline(1.0, color=style.BLACK, linestyle="--", linewidth=1, label="cuBLAS")
        ax.set_xticks(range(len(run.kernels)), [k.removeprefix("matmul_").replace("_", "\n", 1) for k in run.kernels])
        ax.set_title(run.device, fontsize=10)
    axes[0][0].set_ylabel(f"fraction of cuBLAS's speed at {data[0].size()}")   # its time / the kernel's
    axes[0][0].set_ylim(0, max(1.0, *(ax.get_ylim()[1] for ax in axes[0])) * 1.15)
    # Below the panels, in one row: inside them it would hide a bar's number.
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    # Each run's label wrapped to the figure's width: a longer line would widen the saved figure,
    # which the page then shrinks until its smallest text is too small to read.
    fig.suptitle("Hopper's kernels, step by step, beside cuBLAS at the same precision\n"
                 + "\n".join(textwrap.fill(run.label, 100) for run in data), fontsize=10)
    return fig
