"""The book's matrix-multiplication kernels (course/tiling_course/cuda/*.cu) and how to launch each.

    from tiling_course import matmul
    P = matmul.multiply(M, N, kernel="tiled", tile=16)          # NumPy in, NumPy out
    print(matmul.source("tiled"))                               # the CUDA C

Used by the tests, the benchmarks and the book, so every one of them launches a
kernel with the same grid, block, options and arguments.
"""
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from cudacheck import RawModule, gpu_available
from cudacheck.launch import DEFAULT_SHARED_LIMIT, MAX_THREADS_PER_BLOCK



@dataclass(frozen=True)
class Spec:
    file: str
    function: str
    tile_macro: str | None   # the -D macro that sets the tile, if the tile is compiled in
    shapes: str              # "square", "square-multiple", "any", "tile-inner"
    arguments: str           # "width": (M, N, P, Width); "mkn": (M, N, P, m, k, n); "n": (a, b, c, n)
    dynamic_shared: bool = False
    # Kernels whose threads compute several elements of P (the ladder) fix their own block
    # and the tile of P a block computes, from their macros' defaults; `tile` does not
    # apply to them. None (the book's other kernels): tile x tile threads, one element each.
    block: tuple | None = None   # threads per block, (x, y)
    tile_m: int | None = None    # rows of P per block
    tile_n: int | None = None    # columns of P per block

    def options(self, tile):
        return (f"-D{self.tile_macro}={tile}",) if self.tile_macro else ()


KERNELS = {
    "naive": Spec("naive.cu", "matmul_naive", None, "square", "width"),
    "tiled": Spec("tiled.cu", "matmul_tiled", "TILE_WIDTH", "square-multiple", "width"),
    "tiled_bounds": Spec("tiled_bounds.cu", "matmul_tiled_bounds", "TILE_WIDTH", "any", "mkn"),
    "tiled_dynamic": Spec("tiled_dynamic.cu", "matmul_tiled_dynamic", None, "any", "mkn", dynamic_shared=True),
    "simpleMultiply": Spec("best_practices.cu", "simpleMultiply", "TILE_DIM", "tile-inner", "n"),
    "coalescedMultiply": Spec("best_practices.cu", "coalescedMultiply", "TILE_DIM", "tile-inner", "n"),
    "sharedABMultiply": Spec("best_practices.cu", "sharedABMultiply", "TILE_DIM", "tile-inner", "n"),
    # The ladder from tiled toward cuBLAS (course/tiling_course/cuda/ladder*.cu), each rung one idea
    # more; blocks and tiles as their macros' defaults (tests/test_ladder.py checks that).
    "ladder1_coarsened": Spec("ladder1_coarsened.cu", "matmul_ladder1_coarsened", None, "any", "mkn",
                              block=(32, 8), tile_m=32, tile_n=32),
    "ladder2_regtile1d": Spec("ladder2_regtile1d.cu", "matmul_ladder2_regtile1d", None, "any", "mkn",
                              block=(256, 1), tile_m=64, tile_n=64),
    "ladder3_regtile2d": Spec("ladder3_regtile2d.cu", "matmul_ladder3_regtile2d", None, "any", "mkn",
                              block=(256, 1), tile_m=128, tile_n=128),
    "ladder4_vectorized": Spec("ladder4_vectorized.cu", "matmul_ladder4_vectorized", None, "any", "mkn",
                               block=(256, 1), tile_m=128, tile_n=128),
    "ladder5_warptiled": Spec("ladder5_warptiled.cu", "matmul_ladder5_warptiled", None, "any", "mkn",
                              block=(256, 1), tile_m=128, tile_n=128),
}


def source(kernel):
    """The CUDA C source file of a kernel of the book."""
    return resources.files(__package__).joinpath("cuda", KERNELS[_spec_name(kernel)].file).read_text()


def _spec_name(kernel):
    if kernel not in KERNELS:
        raise KeyError(f"no kernel {kernel!r}; the book's kernels are {', '.join(KERNELS)}")
    return kernel


@lru_cache(maxsize=None)
def compile(kernel, tile=16, backend="auto", code=None, check=False):
    """The compiled kernel (a cudacheck.Function), built once per kernel, tile, backend,
    source and mode. `code` replaces the file's source, for a reader's edited copy;
    check=True compiles it for checked mode (CPU runtime)."""
    spec = KERNELS[_spec_name(kernel)]
    mod = RawModule(code or source(kernel), options=spec.options(tile), backend=backend, check=check)
    return mod.get_function(spec.function)


def check_shapes(kernel, m, k, n, tile):
    """Raise ValueError if the kernel cannot multiply an m x k by a k x n matrix."""
    shapes = KERNELS[_spec_name(kernel)].shapes
    if shapes in ("square", "square-multiple") and not m == k == n:
        raise ValueError(f"{kernel} multiplies square matrices; got {m}x{k} times {k}x{n} (use tiled_bounds)")
    if shapes == "square-multiple" and m % tile:
        raise ValueError(f"{kernel} needs Width to be a multiple of the tile ({tile}); got Width={m} "
                         "(tiled_bounds handles any size)")
    if shapes == "tile-inner" and (k != tile or m % tile or n % tile):
        raise ValueError(f"{kernel} multiplies an m x {tile} by a {tile} x n matrix with m and n multiples of "
                         f"{tile}; got {m}x{k} times {k}x{n}")


def geometry(kernel, m, k, n, tile, check=True):
    """(grid, block, shared_mem) for P (m x n) with blocks of tile x tile threads, or for
    a ladder kernel the block and the tile_m x tile_n tile of P its Spec gives (tile unused).
    check=False skips check_shapes, to launch a wrong kernel on a shape it mishandles."""
    if check:
        check_shapes(kernel, m, k, n, tile)
    spec = KERNELS[kernel]
    tile_m, tile_n = spec.tile_m or tile, spec.tile_n or tile
    grid = (-(-n // tile_n), -(-m // tile_m))
    shared = 2 * tile * tile * 4 if spec.dynamic_shared else 0
    return grid, spec.block or (tile, tile), shared


def arguments(kernel, M, N, P):
    (m, k), n = M.shape, N.shape[1]
    kind = KERNELS[_spec_name(kernel)].arguments
    if kind == "width":
        return (M, N, P, np.int32(m))
    if kind == "mkn":
        return (M, N, P, np.int32(m), np.int32(k), np.int32(n))
    return (M, N, P, np.int32(n))


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


def multiply(M, N, kernel="tiled", tile=16, backend="auto", code=None, P=None, check=False):
    """P = M @ N with one of the book's kernels; returns P.

    The CPU backend takes and returns NumPy arrays; the GPU backend CuPy arrays (NumPy
    inputs are copied to the GPU). Inputs are used as float32, C-contiguous. The ladder
    kernels (ladder*) ignore `tile`: their tiles are their sources' compiled-in defaults.
    """
    fn = compile(kernel, tile, backend, code, check)
    xp = np
    if fn.backend == "gpu":
        import cupy as xp
    M = xp.ascontiguousarray(xp.asarray(M, dtype=xp.float32))
    N = xp.ascontiguousarray(xp.asarray(N, dtype=xp.float32))
    if M.ndim != 2 or N.ndim != 2 or M.shape[1] != N.shape[0]:
        raise ValueError(f"cannot multiply shapes {M.shape} and {N.shape}")
    m, k = M.shape
    n = N.shape[1]
    grid, block, shared = geometry(kernel, m, k, n, tile)
    if P is None:
        P = xp.zeros((m, n), dtype=xp.float32)
    fn(grid, block, arguments(kernel, M, N, P), shared_mem=shared)
    return P
