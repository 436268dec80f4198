"""What the checker (tiling_course.tryout.run) tries a reader's kernel on: a task says
what the kernel must compute, how it is launched and how its result is judged.

    from tiling_course import matmul, tasks, tryout
    tryout.run(src, "tiled")                                   # a matrix product of the book
    tryout.run(src, tasks.Matmul(matmul.Launch("tiled", function="mine")))   # the same, spelled out
    tryout.run(src, tasks.BlockTranspose(), tile=16)           # each tile of A transposed in place
    tryout.run(src, tasks.Histogram(), tile=128)               # values counted into bins

tryout.run is one loop over shapes and places (checked mode on the CPU, then the GPU) for
every task; a task supplies what differs between them:

    name                         the __global__ function, for the messages
    rank                         numbers in a shape: 3 (m, k, n) or 2 (height, width; values, bins)
    default_shapes(tile)         the shapes to try when the caller gives none
    describe(shape), size(shape) the shape after "on" and "cannot take" ("16x16 times 16x16",
                                 "A of 32 x 48"), and in a pass's list ("16x16·16x16", "32x48")
    inputs(shape, rng)           the input arrays (NumPy: float32, the histogram's values int32);
                                 a kernel that works in place (the transpose) runs on a copy
    run(code, inputs, tile, backend, check, **options) -> (result, Function)
                                 the kernel launched on copies of the inputs (CuPy arrays on
                                 the GPU backend; the result stays there); ValueError for a
                                 shape it cannot take; options go to a checked launch (trace=)
    compile(code, tile, backend, check)
                                 the cudacheck Function, built once per source and options
    compare(result, inputs, tile) None if the result (NumPy) is right, else a dict on one
                                 wrong element: array, row, col, expected, got, count, total,
                                 and `element`, how to write it, where that is not array[row][col]
    reference, result            what compare measures against, and what the kernel computes
                                 (a requirement's failure says it "computes the right product")
    writers(code, inputs, tile, row, col) -> (block, block shape, threads)
                                 who stores that element, from a checked run tracing its block
    holder                       which block that is, in words ("whose tile holds it")
    tile_note(tiles), verdict    the pass message's words on the tile and on the result

An exercise names its task in its `launch` table (from_table).
"""
from dataclasses import dataclass

import numpy as np

from . import matmul, precision

UNIT_ROUNDOFF = 2.0 ** -24


class Task:
    """The interface above; Matmul, BlockTranspose and Histogram implement it."""
    name = ""
    rank = 0
    reference = ""
    result = ""
    verdict = ""
    holder = "whose tile holds it"

    def default_shapes(self, tile):
        raise NotImplementedError

    def describe(self, shape):
        raise NotImplementedError

    def size(self, shape):
        raise NotImplementedError

    def inputs(self, shape, rng):
        raise NotImplementedError

    def run(self, code, inputs, tile, backend, check, **options):
        raise NotImplementedError

    def compile(self, code, tile, backend, check):
        raise NotImplementedError

    def compare(self, result, inputs, tile):
        raise NotImplementedError

    def writers(self, code, inputs, tile, row, col):
        raise NotImplementedError

    def tile_note(self, tiles):
        raise NotImplementedError

    def source(self):
        """The kernel to try when the caller gives no code."""
        raise ValueError(f"no source of `{self.name}` to try: pass the kernel's CUDA C")


def stores(report, position, flat):
    """The threads (x, y, z) that a checked run's trace shows storing element `flat` of
    the kernel's `position`-th array parameter."""
    out = list(report.global_counts)[position]
    return sorted({a.thread for a in report.trace if a.array == out and a.op == "W" and a.index == flat})


# ------------------------------------------------------------------ matrix product

def tolerance(M, N):
    """Elementwise bound on a float32 dot product's rounding error: 2 k u |M||N|."""
    k = M.shape[1]
    return 2 * k * UNIT_ROUNDOFF * (np.abs(M.astype(np.float64)) @ np.abs(N.astype(np.float64))) + 1e-30


def compare(P, M, N):
    """None if P matches M @ N within the bound; else a dict about the worst element.
    M and N are what the kernel multiplies (for a tensor-core kernel, its rounded inputs)."""
    ref = M.astype(np.float64) @ N.astype(np.float64)
    err = np.abs(np.asarray(P, np.float64) - ref)
    bad = err > tolerance(M, N)
    if not bad.any():
        return None
    row, col = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
    row, col = int(row), int(col)
    return dict(array="P", count=int(bad.sum()), total=int(bad.size), row=row, col=col,
                expected=float(ref[row, col]), got=float(P[row, col]))


def writers(code, launch, M, N, tile, row, col, precision=None):
    """Who stores P[row][col]: (block, block shape, threads), from a checked run that
    traces the block whose tile holds it. The kernel's own stores say it, whatever its
    geometry (a ladder rung's thread owns elements rows apart)."""
    block = launch.block_of(row, col, tile)
    shape = launch.geometry(M.shape[0], M.shape[1], N.shape[1], tile, check=False)[1]
    _, fn = matmul.run(M, N, tile=tile, backend="cpu", code=code, check=True, launch=launch, trace=[block[:2]],
                       precision=precision)
    return block, shape, stores(fn.last_launch, 2, row * N.shape[1] + col)   # the third array is P


def default_shapes(kernel, tile):
    """Awkward shapes the kernel can take: small, non-multiples of the tile, m != k != n."""
    spec = matmul.spec(kernel)
    shapes = spec.shapes
    if spec.tile_m:   # a ladder rung: cross its own block tile, with rows and columns not multiples of 4,
        # then with every row 16 bytes aligned, which takes the wide and asynchronous copies' main path
        return [(1, 1, 1), (spec.tile_m + 3, 37, spec.tile_n + 1), (2 * spec.tile_m - 5, 4 * spec.tile_n + 4, 9),
                (spec.tile_m + 16, 72, spec.tile_n + 8)]
    if shapes is matmul.Shapes.SQUARE:
        return [(w, w, w) for w in (1, tile + 3, 2 * tile + 1)]
    if shapes is matmul.Shapes.SQUARE_MULTIPLE:
        return [(w, w, w) for w in (tile, 2 * tile, 3 * tile)]
    if shapes is matmul.Shapes.TILE_INNER:
        return [(tile, tile, tile), (3 * tile, tile, 2 * tile)]
    return [(1, 1, 1), (tile + 1, 2 * tile - 1, tile + 3), (2 * tile + 5, 7, 3 * tile - 2)]


@dataclass(frozen=True)
class Matmul(Task):
    """P = M @ N, launched as `launch` says (matmul.run), compared with NumPy in float64
    within float32's rounding bound."""
    launch: matmul.Launch
    rank = 3
    reference = "NumPy"
    result = "product"
    verdict = "matches NumPy in float64"

    @property
    def name(self):
        return self.launch.name

    def default_shapes(self, tile):
        return default_shapes(self.launch.kernel, tile)

    def describe(self, shape):
        m, k, n = shape
        return f"{m}x{k} times {k}x{n}"

    def size(self, shape):
        m, k, n = shape
        return f"{m}x{k}·{k}x{n}"

    def inputs(self, shape, rng):
        m, k, n = shape
        return rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)

    def run(self, code, inputs, tile, backend, check, **options):
        M, N = inputs
        return matmul.run(M, N, tile=tile, backend=backend, code=code, check=check, launch=self.launch, **options)

    def compile(self, code, tile, backend, check):
        return matmul.compile(self.launch.kernel, tile, backend, code, check, self.launch)

    def compare(self, result, inputs, tile):
        return compare(result, *inputs)

    def writers(self, code, inputs, tile, row, col):
        return writers(code, self.launch, *inputs, tile, row, col)

    def tile_note(self, tiles):
        if self.launch.spec.tile_m:   # a ladder rung: its tile is compiled in
            return ""
        tiles = list(tiles)
        if len(tiles) == 1:
            return f"(tile {tiles[0]})"
        return f"(tiles {' and '.join(map(str, tiles))}, each)"

    def source(self):
        return matmul.source(self.launch.kernel)


@dataclass(frozen=True)
class TensorCoreMatmul(Matmul):
    """P = M @ N by a tensor-core kernel at `precision` (fp16, bf16, tf32): the inputs are
    rounded to it (precision.rounded: what the kernel really multiplies), and P must match
    the float64 product of those rounded inputs within float accumulation's bound, the
    same bound as every FP32 kernel: the rounding of the inputs is the precision's cost,
    not the kernel's error (chapter 8 measures it apart)."""
    precision: str = "fp16"

    @property
    def verdict(self):
        return f"matches NumPy in float64 on its {self.precision.upper()}-rounded inputs"

    def run(self, code, inputs, tile, backend, check, **options):
        return super().run(code, inputs, tile, backend, check, precision=self.precision, **options)

    def compile(self, code, tile, backend, check):
        return matmul.compile(self.launch.kernel, tile, backend, code, check, self.launch, self.precision)

    def compare(self, result, inputs, tile):
        return compare(result, *(precision.rounded(x, self.precision) for x in inputs))

    def writers(self, code, inputs, tile, row, col):
        return writers(code, self.launch, *inputs, tile, row, col, self.precision)

    def tile_note(self, tiles):
        return f"({self.precision.upper()} inputs)"


def product(launch, precision=None):
    """The task of a matrix product launched as `launch`: a tensor-core kernel's at its
    precision (the kernel's default if None), else the FP32 one."""
    precision = launch.precision(precision)   # refuses one the kernel does not offer
    return Matmul(launch) if precision == "fp32" else TensorCoreMatmul(launch, precision)


# ----------------------------------------------------------------- block transpose

@dataclass(frozen=True)
class BlockTranspose(Task):
    """Each BLOCK_WIDTH x BLOCK_WIDTH tile of A (height x width, row-major, both multiples
    of BLOCK_WIDTH) transposed in place, as PMPP's chapter 5 exercise 10 launches it:
    grid (width / BLOCK_WIDTH, height / BLOCK_WIDTH), blocks of BLOCK_WIDTH x BLOCK_WIDTH
    threads, arguments (A, width, height). `tile` is BLOCK_WIDTH (the `macro` option). It
    only moves numbers, so the result is compared exactly."""
    function: str = "block_transpose"
    macro: str = "BLOCK_WIDTH"
    rank = 2
    reference = "A with each tile transposed"
    result = "transpose"
    verdict = "transposes every tile of A in place, bit for bit,"

    @property
    def name(self):
        return self.function

    def default_shapes(self, tile):
        return [(tile, tile), (2 * tile, 3 * tile), (3 * tile, tile)]

    def describe(self, shape):
        return f"A of {shape[0]} x {shape[1]}"

    def size(self, shape):
        return f"{shape[0]}x{shape[1]}"

    def inputs(self, shape, rng):
        return (rng.uniform(-1, 1, shape).astype(np.float32),)

    def check_shape(self, shape, tile):
        """Raise ValueError if A's height or width is no multiple of BLOCK_WIDTH."""
        if len(shape) != 2 or shape[0] % tile or shape[1] % tile or not all(shape):
            raise ValueError(f"`{self.name}` transposes whole tiles: A's height and width must be positive "
                             f"multiples of {self.macro} ({tile}); got {' x '.join(map(str, shape))}")

    def compile(self, code, tile, backend, check):
        return matmul.build(code, self.function, matmul.tile_options(self.macro, tile, code), backend, check)

    def run(self, code, inputs, tile, backend, check, **options):
        self.check_shape(inputs[0].shape, tile)
        fn = self.compile(code, tile, backend, check)
        xp = np
        if fn.backend == "gpu":
            import cupy as xp
        A = xp.array(inputs[0], dtype=xp.float32, order="C")   # a copy, on the backend's device
        height, width = A.shape
        fn((width // tile, height // tile), (tile, tile), (A, np.int32(width), np.int32(height)), **options)
        return A, fn

    def expected(self, A, tile):
        """A with each tile x tile tile transposed where it stands."""
        h, w = A.shape
        return A.reshape(h // tile, tile, w // tile, tile).transpose(0, 3, 2, 1).reshape(h, w)

    def compare(self, result, inputs, tile):
        ref = self.expected(inputs[0], tile)
        bad = result != ref
        if not bad.any():
            return None
        row, col = (int(i) for i in np.unravel_index(np.argmax(bad), bad.shape))   # the first, row by row
        return dict(array="A", count=int(bad.sum()), total=int(bad.size), row=row, col=col,
                    expected=float(ref[row, col]), got=float(result[row, col]))

    def writers(self, code, inputs, tile, row, col):
        block = (col // tile, row // tile, 0)
        A = inputs[0]
        _, fn = self.run(code, inputs, tile, "cpu", True, trace=[block[:2]])
        return block, (tile, tile), stores(fn.last_launch, 0, row * A.shape[1] + col)   # A is its first array

    def tile_note(self, tiles):
        tiles = list(tiles)
        if len(tiles) == 1:
            return f"({self.macro} {tiles[0]})"
        return f"({self.macro} {' and '.join(map(str, tiles))}, each)"


# ------------------------------------------------------------------------ histogram

@dataclass(frozen=True)
class Histogram(Task):
    """hist[b] = how many of the n values in `data` equal b, for bins b = 0 .. bins - 1
    (every value is a bin index), one thread per value: grid ceil(n / tile), blocks of
    `tile` threads, arguments (data, hist, n), hist zeroed before the launch. The shape is
    (n, bins). Counts are compared exactly. Threads of a block take turns on the CPU
    runtime, so a count that two threads update without an atomic comes out right there
    and loses updates on a GPU: only the checked run shows the race."""
    function: str = "histogram"
    rank = 2
    reference = "NumPy's bincount"
    result = "counts"
    verdict = "counts every value exactly"
    holder = "which holds a value of that bin"

    @property
    def name(self):
        return self.function

    def default_shapes(self, tile):
        return [(1, 16), (3 * tile + 5, 16), (5 * tile - 3, 3)]

    def describe(self, shape):
        n, bins = shape
        return f"{n} value{'s' if n != 1 else ''} in {bins} bins"

    def size(self, shape):
        return self.describe(shape)

    def inputs(self, shape, rng):
        """The values, and the histogram as the launch receives it: zeros (copied for each run)."""
        n, bins = shape
        return rng.integers(0, bins, n).astype(np.int32), np.zeros(bins, np.uint32)

    def check_shape(self, shape):
        """Raise ValueError for a histogram of no values or no bins."""
        if len(shape) != 2 or not all(shape):
            raise ValueError(f"a histogram needs at least one value and one bin; got {' x '.join(map(str, shape))}")

    def compile(self, code, tile, backend, check):
        return matmul.build(code, self.function, (), backend, check)

    def run(self, code, inputs, tile, backend, check, **options):
        data, empty = inputs
        self.check_shape((data.size, empty.size))
        fn = self.compile(code, tile, backend, check)
        xp = np
        if fn.backend == "gpu":
            import cupy as xp
        data, hist = xp.asarray(data, dtype=xp.int32), xp.array(empty, dtype=xp.uint32)   # hist: a copy
        n = data.shape[0]
        fn((-(-n // tile),), (tile,), (data, hist, np.int32(n)), **options)
        return hist, fn

    def compare(self, result, inputs, tile):
        data, empty = inputs
        ref = self.expected(data, empty.size)
        bad = np.asarray(result) != ref
        if not bad.any():
            return None
        b = int(np.argmax(bad))
        return dict(array="hist", count=int(bad.sum()), total=int(bad.size), row=0, col=b, element=f"hist[{b}]",
                    expected=float(ref[b]), got=float(result[b]))

    @staticmethod
    def expected(data, bins):
        return np.bincount(data, minlength=bins).astype(np.uint32)

    def writers(self, code, inputs, tile, row, col):
        """The threads that store hist[col] in the block of the first value in that bin."""
        first = np.flatnonzero(inputs[0] == col)
        block = (int(first[0]) // tile if first.size else 0, 0, 0)
        _, fn = self.run(code, inputs, tile, "cpu", True, trace=[block[:2]])
        return block, (tile, 1), stores(fn.last_launch, 1, col)   # hist is its second array

    def tile_note(self, tiles):
        tiles = list(tiles)
        return f"({' and '.join(map(str, tiles))} threads per block{', each' if len(tiles) > 1 else ''})"


# ------------------------------------------------------------------- from the data

TASKS = {"matmul": Matmul, "block_transpose": BlockTranspose, "histogram": Histogram}


def from_table(table):
    """The task an exercise's `launch` table names: without `task` (or with task =
    "matmul") a matrix product, the other keys a matmul.Launch's ({kernel = "tiled",
    function = ...}); with task = "block_transpose" or "histogram", BlockTranspose's or
    Histogram's ({function = ...}). KeyError or TypeError for what is not one of them."""
    table = dict(table)
    name = table.pop("task", "matmul")
    if name not in TASKS:
        raise KeyError(f"no task {name!r}; the tasks are {', '.join(TASKS)}")
    if name == "matmul":
        launch = matmul.Launch(**table)
        matmul.spec(launch.kernel)   # KeyError for a kernel the book does not have
        return product(launch)       # a tensor-core kernel's at its default precision
    return TASKS[name](**table)
