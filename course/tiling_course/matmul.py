"""The book's matrix-multiplication kernels (kernels/*.cu, tiling_course.sources) and the one way
they are launched.

    from tiling_course import matmul
    P = matmul.multiply(M, N, kernel="tiled", tile=16)          # NumPy in, NumPy out
    print(matmul.source("tiled"))                               # the CUDA C

Everything that launches a kernel of the book, or a reader's kernel of the same form
(the checker, the wrong kernels, the traces, the tests), goes through `run`, so each
launch gets the same grid, block, options and arguments. The benchmark times the same
launch: it builds it from `geometry` and `arguments`.
"""
import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

import numpy as np

from cudacheck import DEFAULT_SHARED_LIMIT, MAX_THREADS_PER_BLOCK, RawModule, gpu_available

from . import precision as precisions
from . import sources


class Shapes(Enum):
    """The products a kernel can compute."""
    SQUARE = "square matrices of any Width"
    SQUARE_MULTIPLE = "square matrices whose Width is a multiple of the tile"
    ANY = "any m x k times k x n"
    TILE_INNER = "m x tile times tile x n, m and n multiples of the tile"


class Args(Enum):
    """The parameter lists of the book's kernels, after the three matrices."""
    WIDTH = "(M, N, P, Width)"
    MKN = "(M, N, P, m, k, n)"
    N = "(a, b, c, n)"


@dataclass(frozen=True)
class Spec:
    file: str
    function: str
    tile_macro: str | None   # the -D macro that sets the tile, if the tile is compiled in
    shapes: Shapes
    arguments: Args
    dynamic_shared: bool = False
    # Kernels whose threads compute several elements of P (the ladder) fix their own block
    # and the tile of P a block computes, from their macros' defaults; `tile` does not
    # apply to them. None (the book's other kernels): tile x tile threads, one element each.
    block: tuple | None = None   # threads per block, (x, y)
    tile_m: int | None = None    # rows of P per block
    tile_n: int | None = None    # columns of P per block
    # The precisions the kernel multiplies in (precision.py), the first its default; a
    # kernel of several selects one with precision.DEFINES. Inputs travel in that format.
    precisions: tuple = ("fp32",)
    # Dynamic shared memory sized by pipeline_shared_bytes (rung 6, the pipelined
    # tensor-core kernel), which also opt in above 48 KiB as on a GPU.
    pipelined: bool = False

    def options(self, tile):
        return (f"-D{self.tile_macro}={tile}",) if self.tile_macro else ()


# The macros of the pipelined kernels that size their dynamic shared memory, at the
# sources' defaults (tests/course/test_ladder.py holds them to the #defines).
PIPELINE_DEFAULTS = {
    "ladder6_pipelined": dict(BM=128, BN=256, BK=16, STAGES=2, MPAD=4),
    "wmma_pipelined": dict(BM=128, BN=128, BK_BYTES=64, STAGES=3),   # BK_BYTES: k per slice in bytes
}


def pipeline_shared_bytes(kernel, precision, **macros):
    """Bytes of dynamic shared memory of a pipelined kernel at its default macros, or at
    `macros` where given: STAGES slices of M and of N. Rung 6 keeps M's slice transposed
    (BK rows of BM + MPAD floats) and N's as BK rows of BN; the tensor-core kernel keeps
    BM rows of BK elements and BK rows of BN, every row padded by 16 bytes."""
    c = {**PIPELINE_DEFAULTS[kernel], **macros}
    if kernel == "ladder6_pipelined":
        return c["STAGES"] * (c["BK"] * (c["BM"] + c["MPAD"]) + c["BK"] * c["BN"]) * 4
    size = precisions.ITEMSIZE[precision]
    bk, pad = c["BK_BYTES"] // size, 16 // size
    return c["STAGES"] * (c["BM"] * (bk + pad) + bk * (c["BN"] + pad)) * size


TENSOR_CORE_PRECISIONS = tuple(precisions.TENSOR_CORE_CAPABILITY)   # fp16, bf16, tf32


KERNELS = {
    "naive": Spec("naive.cu", "matmul_naive", None, Shapes.SQUARE, Args.WIDTH),
    "tiled": Spec("tiled.cu", "matmul_tiled", "TILE_WIDTH", Shapes.SQUARE_MULTIPLE, Args.WIDTH),
    "tiled_transposed": Spec("tiled_transposed.cu", "matmul_tiled_transposed", "TILE_WIDTH", Shapes.SQUARE_MULTIPLE,
                             Args.WIDTH),
    "tiled_bounds": Spec("tiled_bounds.cu", "matmul_tiled_bounds", "TILE_WIDTH", Shapes.ANY, Args.MKN),
    "tiled_dynamic": Spec("tiled_dynamic.cu", "matmul_tiled_dynamic", None, Shapes.ANY, Args.MKN, dynamic_shared=True),
    "simpleMultiply": Spec("best_practices.cu", "simpleMultiply", "TILE_DIM", Shapes.TILE_INNER, Args.N),
    "coalescedMultiply": Spec("best_practices.cu", "coalescedMultiply", "TILE_DIM", Shapes.TILE_INNER, Args.N),
    "sharedABMultiply": Spec("best_practices.cu", "sharedABMultiply", "TILE_DIM", Shapes.TILE_INNER, Args.N),
    # The ladder from tiled toward cuBLAS (kernels/ladder*.cu), each rung one idea
    # more; blocks and tiles as their macros' defaults (tests/course/test_ladder.py checks that).
    "ladder1_coarsened": Spec("ladder1_coarsened.cu", "matmul_ladder1_coarsened", None, Shapes.ANY, Args.MKN,
                              block=(32, 8), tile_m=32, tile_n=32),
    "ladder2_regtile1d": Spec("ladder2_regtile1d.cu", "matmul_ladder2_regtile1d", None, Shapes.ANY, Args.MKN,
                              block=(256, 1), tile_m=64, tile_n=64),
    "ladder3_regtile2d": Spec("ladder3_regtile2d.cu", "matmul_ladder3_regtile2d", None, Shapes.ANY, Args.MKN,
                              block=(256, 1), tile_m=128, tile_n=128),
    "ladder4_vectorized": Spec("ladder4_vectorized.cu", "matmul_ladder4_vectorized", None, Shapes.ANY, Args.MKN,
                               block=(256, 1), tile_m=128, tile_n=128),
    "ladder5_warptiled": Spec("ladder5_warptiled.cu", "matmul_ladder5_warptiled", None, Shapes.ANY, Args.MKN,
                              block=(256, 1), tile_m=128, tile_n=128),
    "ladder6_pipelined": Spec("ladder6_pipelined.cu", "matmul_ladder6_pipelined", None, Shapes.ANY, Args.MKN,
                              block=(256, 1), tile_m=128, tile_n=256, pipelined=True),
    # Tensor cores (kernels/tensor_cores.cu): the tiled kernel with wmma fragments, and the
    # ladder's ideas on it; FP16, BF16 or TF32 inputs, float products.
    "wmma_tiled": Spec("tensor_cores.cu", "matmul_wmma_tiled", None, Shapes.ANY, Args.MKN,
                       block=(128, 1), tile_m=64, tile_n=64, precisions=TENSOR_CORE_PRECISIONS),
    "wmma_pipelined": Spec("tensor_cores.cu", "matmul_wmma_pipelined", None, Shapes.ANY, Args.MKN,
                           block=(128, 1), tile_m=128, tile_n=128, precisions=TENSOR_CORE_PRECISIONS,
                           pipelined=True),
}

# The kernels that multiply float32 inputs in FP32 (all but the tensor-core ones).
FP32_KERNELS = [name for name, s in KERNELS.items() if s.precisions == ("fp32",)]


def source(kernel):
    """The CUDA C source file of a kernel of the book."""
    return sources.read(spec(kernel).file)


def apply_edits(src, edits, who, base):
    """`src` with each (old, new) pair of `edits` applied to the first occurrence of old,
    which must be there: an edit of a book kernel whose text changed stops here, naming
    `who` made the edit and `base`, what it was an edit of."""
    for old, new in edits:
        if old not in src:
            raise ValueError(f"{who}: an edit's text is not in {base}: {old!r}")
        src = src.replace(old, new, 1)
    return src


def spec(kernel):
    """The Spec of a kernel of the book; KeyError naming the book's kernels otherwise."""
    if kernel not in KERNELS:
        raise KeyError(f"no kernel {kernel!r}; the book's kernels are {', '.join(KERNELS)}")
    return KERNELS[kernel]


@dataclass(frozen=True)
class Launch:
    """How to launch a kernel of the form of one of the book's: the spec of `kernel` gives
    the arguments, the accepted shapes, the tile option and the grid; `function` names a
    __global__ function of another name (a reader's variant); with `columns_per_thread`
    c > 1 each thread computes c elements of P in one row, `tile` apart, so a block of
    tile x tile threads covers tile x c*tile elements of P. With `transpose_n` the kernel
    takes N transposed, an n x k row-major matrix (as attention's Q times K transposed
    does): it still computes M @ N, from N's transpose."""
    kernel: str
    function: str | None = None
    columns_per_thread: int = 1
    transpose_n: bool = False

    @property
    def spec(self):
        return spec(self.kernel)

    @property
    def name(self):
        return self.function or self.spec.function

    def options(self, tile, code=None):
        """The compiler options that set the tile; none where `code` already defaults
        its tile macro to `tile` (`#ifndef TILE_WIDTH` / `#define TILE_WIDTH 16`) or
        never uses it, so the build is the one the %%cuda cell made of the same source."""
        macro = self.spec.tile_macro
        return tile_options(macro, tile, code if code is not None else source(self.kernel)) if macro else ()

    def check_shape(self, m, k, n, tile):
        """Raise ValueError if the kernel cannot multiply an m x k by a k x n matrix."""
        shapes, kernel = self.spec.shapes, self.kernel
        if shapes in (Shapes.SQUARE, Shapes.SQUARE_MULTIPLE) and not m == k == n:
            raise ValueError(f"{kernel} multiplies square matrices; got {m}x{k} times {k}x{n} (use tiled_bounds)")
        if shapes is Shapes.SQUARE_MULTIPLE and m % tile:
            raise ValueError(f"{kernel} needs Width to be a multiple of the tile ({tile}); got Width={m} "
                             "(tiled_bounds handles any size)")
        if shapes is Shapes.TILE_INNER and (k != tile or m % tile or n % tile):
            raise ValueError(f"{kernel} multiplies an m x {tile} by a {tile} x n matrix with m and n multiples "
                             f"of {tile}; got {m}x{k} times {k}x{n}")

    def geometry(self, m, k, n, tile, check=True, precision=None):
        """(grid, block, shared_mem) for P (m x n): blocks of tile x tile threads, or for a
        ladder kernel the block and tile_m x tile_n tile of P its Spec gives (tile unused).
        check=False skips check_shape, to launch a wrong kernel on a shape it mishandles."""
        if check:
            self.check_shape(m, k, n, tile)
        s = self.spec
        tile_m, tile_n = self.tile_of_p(tile)
        grid = (-(-n // tile_n), -(-m // tile_m))
        if s.pipelined:
            shared = pipeline_shared_bytes(self.kernel, self.precision(precision))
        else:
            shared = 2 * tile * tile * 4 if s.dynamic_shared else 0
        return grid, s.block or (tile, tile), shared

    def precision(self, precision=None):
        """The precision a launch multiplies in: `precision`, which the kernel must offer,
        or the kernel's default."""
        offered = self.spec.precisions
        if precision is None:
            return offered[0]
        if precision not in offered:
            raise ValueError(f"{self.kernel} multiplies in {', '.join(offered)}; got precision={precision!r}")
        return precision

    def tile_of_p(self, tile):
        """(rows, columns) of the tile of P one block computes."""
        s = self.spec
        return s.tile_m or tile, (s.tile_n or tile) * self.columns_per_thread

    def arguments(self, M, N, P):
        (m, k), n = M.shape, N.shape[1]
        if self.transpose_n:
            N = N.T.copy()   # C order, NumPy or CuPy
        kind = self.spec.arguments
        if kind is Args.WIDTH:
            return (M, N, P, np.int32(m))
        if kind is Args.MKN:
            return (M, N, P, np.int32(m), np.int32(k), np.int32(n))
        return (M, N, P, np.int32(n))

    def block_of(self, row, col, tile):
        """The block whose tile of P holds P[row][col]."""
        tile_m, tile_n = self.tile_of_p(tile)
        return (col // tile_n, row // tile_m, 0)


def tile_options(macro, tile, code):
    """The compiler option that sets `macro` to `tile`; none where `code` never uses it or
    already defaults it to `tile` (`#ifndef TILE_WIDTH` / `#define TILE_WIDTH 16`), so
    the build is the one the %%cuda cell made of the same source."""
    if not re.search(rf"\b{macro}\b", code):
        return ()
    if re.search(rf"#\s*ifndef\s+{macro}[ \t]*\n\s*#\s*define\s+{macro}\s+{int(tile)}\s*\n", code):
        return ()
    return (f"-D{macro}={int(tile)}",)


@lru_cache(maxsize=128)
def build(code, name, options, backend, check):
    """The cudacheck Function `name` of `code`, compiled once per source, options, backend
    and mode."""
    return RawModule(code, options=options, backend=backend, check=check).get_function(name)


def compile(kernel, tile=16, backend="auto", code=None, check=False, launch=None, precision=None):
    """The compiled kernel (a cudacheck.Function), built once per source, options, backend
    and mode. `code` replaces the book's source, for a reader's copy; check=True compiles
    it for checked mode (CPU runtime); `precision` selects a tensor-core kernel's inputs."""
    launch = launch or Launch(kernel)
    code = code if code is not None else source(launch.kernel)
    precision = launch.precision(precision)
    fn = build(code, launch.name, launch.options(tile, code) + precisions.DEFINES[precision], backend, check)
    if launch.spec.pipelined:   # above 48 KiB of dynamic shared memory a kernel opts in, as on a GPU
        shared = pipeline_shared_bytes(launch.kernel, precision)
        if shared > DEFAULT_SHARED_LIMIT:
            fn.max_dynamic_shared_size_bytes = shared
    return fn


def run(M, N, kernel="tiled", tile=16, backend="auto", code=None, check=False, *, launch=None, P=None,
        check_shape=True, precision=None, **call_options):
    """P = M @ N launched as the book launches `kernel` (or as `launch` says, for a
    reader's variant); returns (P, the cudacheck.Function, for its last_launch report).

    The CPU backend takes and returns NumPy arrays; the GPU backend CuPy arrays (NumPy
    inputs are copied to the GPU). Inputs are used as float32, C-contiguous, and given to
    a tensor-core kernel in its `precision`'s format (precision.to_device_format: FP16
    and BF16 round to nearest even); P is float32. The ladder and tensor-core kernels
    ignore `tile`: their tiles are their sources' compiled-in defaults.
    call_options go to the launch (checked mode's trace=, trace_threads=, schedule=).
    """
    launch = launch or Launch(kernel)
    precision = launch.precision(precision)
    fn = compile(launch.kernel, tile, backend, code, check, launch, precision)
    xp = np
    if fn.backend == "gpu":
        import cupy as xp
    M = xp.ascontiguousarray(xp.asarray(M, dtype=xp.float32))
    N = xp.ascontiguousarray(xp.asarray(N, dtype=xp.float32))
    if M.ndim != 2 or N.ndim != 2 or M.shape[1] != N.shape[0]:
        raise ValueError(f"cannot multiply shapes {M.shape} and {N.shape}")
    (m, k), n = M.shape, N.shape[1]
    grid, block, shared = launch.geometry(m, k, n, tile, check=check_shape, precision=precision)
    if P is None:
        P = xp.zeros((m, n), dtype=xp.float32)
    M, N = precisions.to_device_format(M, precision), precisions.to_device_format(N, precision)
    # sync: a teaching call waits for its kernel, so a fault on a GPU stops at this launch, named
    fn(grid, block, launch.arguments(M, N, P), shared_mem=shared, sync=True, **call_options)
    return P, fn


def take_report(fn):
    """A checked launch's LaunchReport, taken off the Function the compile caches keep for later
    calls: a trace can hold a million accesses, and a process that keeps them forks every later
    launch's workers the slower."""
    report, fn.last_launch = fn.last_launch, None
    return report


def run_checked(M, N, kernel="tiled", tile=16, **options):
    """(P, its LaunchReport): run() in checked mode on the CPU runtime, the report taken
    (take_report)."""
    P, fn = run(M, N, kernel, tile, "cpu", check=True, **options)
    return P, take_report(fn)


def multiply(M, N, kernel="tiled", tile=16, backend="auto", code=None, P=None, check=False, precision=None):
    """P = M @ N with one of the book's kernels; returns P (see run)."""
    return run(M, N, kernel, tile, backend, code, check, P=P, precision=precision)[0]


def check_shapes(kernel, m, k, n, tile):
    """Raise ValueError if the book's `kernel` cannot multiply an m x k by a k x n matrix."""
    Launch(kernel).check_shape(m, k, n, tile)


def geometry(kernel, m, k, n, tile, check=True):
    """(grid, block, shared_mem) of the book's `kernel` for P (m x n); see Launch.geometry."""
    return Launch(kernel).geometry(m, k, n, tile, check)


def arguments(kernel, M, N, P):
    """The argument tuple of the book's `kernel` for P = M @ N."""
    return Launch(kernel).arguments(M, N, P)


def choose_tile(backend="auto", candidates=(32, 16, 8, 4, 2)):
    """The largest square tile whose block and two float tiles fit the device: on a GPU
    read from its properties, on the CPU runtime from CUDA's common limits."""
    if (backend == "auto" and gpu_available()) or backend == "gpu":
        import cupy
        attrs = cupy.cuda.Device().attributes
        threads, smem = attrs["MaxThreadsPerBlock"], attrs["MaxSharedMemoryPerBlock"]
    else:
        threads, smem = MAX_THREADS_PER_BLOCK, DEFAULT_SHARED_LIMIT
    return next(t for t in candidates if t * t <= threads and 2 * t * t * 4 <= smem)
