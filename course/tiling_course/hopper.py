"""Chapter 9's Hopper kernels (kernels/hopper.cu): the one way each is launched, on an H100 or
H200 or on the CPU runtime. What the GPUs measured of them is measure.hopperdata's (the runs of
measure.bench_hopper).

    from tiling_course import hopper
    P, fn = hopper.run(M, N, "matmul_persistent", "bf16", backend="cpu")   # float32 in, float32 P

The launch rule lives here alone (hopper.cu's header comment states it): the benchmark, the
tests and the checker (tasks.HopperMatmul) all launch through `launch` or `launcher`.
"""
import ctypes

import numpy as np

from cudacheck import gpu_available, pad_rows, tensor_map_2d

from . import magic, matmul, precision, sources

FILE = "hopper.cu"
# In the chapter's order: each kernel one step from the one before.
KERNELS = ("matmul_tma_wgmma", "matmul_warp_specialized", "matmul_persistent", "matmul_clustered",
           "matmul_async_store", "matmul_tf32")
PRECISIONS = ("bf16", "fp16", "tf32")
# The precisions each kernel multiplies in: the 16-bit kernels read both tiles from shared
# memory, matmul_tf32 reads N's from registers (wgmma takes TF32 from shared memory K-major only).
KERNEL_PRECISIONS = {k: ("tf32",) if k == "matmul_tf32" else ("bf16", "fp16") for k in KERNELS}
# Every kernel at each of its precisions, in the order measure.bench_hopper runs and stores them.
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
