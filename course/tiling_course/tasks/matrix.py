"""The matrix-product tasks: P = M @ N by a kernel of the book's form (Matmul), or by a
tensor-core kernel at a precision (TensorCoreMatmul), compared with NumPy in float64 within
float32's rounding bound; what they share (Product, RoundedInputs) serves the Hopper kernels'
task too (hopper.py)."""
from dataclasses import dataclass

import numpy as np

from .. import matmul, precision
from .base import Task, stores

UNIT_ROUNDOFF = 2.0 ** -24


def tolerance(M, N):
    """Elementwise bound on a float32 dot product's rounding error: 2 k u |M||N|."""
    k = M.shape[1]
    return 2 * k * UNIT_ROUNDOFF * (np.abs(M.astype(np.float64)) @ np.abs(N.astype(np.float64))) + 1e-30


def compare(P, M, N):
    """None if P matches M @ N within the bound; else a dict about the worst element.
    M and N are what the kernel multiplies (for a tensor-core kernel, its rounded inputs)."""
    ref = M.astype(np.float64) @ N.astype(np.float64)
    err = np.abs(np.asarray(P, np.float64) - ref)
    bad = ~(err <= tolerance(M, N))   # NaN too: an element never stored where P starts as NaN (hopper.output)
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
    _, report = matmul.run_checked(M, N, tile=tile, code=code, launch=launch, trace=[block[:2]], precision=precision)
    return block, shape, stores(report, 2, row * N.shape[1] + col)   # the third array is P


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


class Product(Task):
    """What every matrix-product task shares: shapes (m, k, n), inputs uniform in [-1, 1),
    P compared with their float64 product within float32's rounding bound."""
    rank = 3
    reference = "NumPy"
    result = "product"
    verdict = "matches NumPy in float64"

    def describe(self, shape):
        m, k, n = shape
        return f"{m}x{k} times {k}x{n}"

    def size(self, shape):
        m, k, n = shape
        return f"{m}x{k}·{k}x{n}"

    def inputs(self, shape, rng):
        m, k, n = shape
        return rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)

    def compare(self, result, inputs, tile):
        return compare(result, *inputs)


class RoundedInputs:
    """A product of a kernel whose inputs are rounded to `self.precision` (precision.rounded:
    what it really multiplies): P must match the float64 product of those rounded inputs
    within float accumulation's bound, the same bound as every FP32 kernel: the rounding of
    the inputs is the precision's cost, not the kernel's error (chapter 8 measures it apart)."""

    @property
    def verdict(self):
        return f"matches NumPy in float64 on its {self.precision.upper()}-rounded inputs"

    def compare(self, result, inputs, tile):
        return compare(result, *(precision.rounded(x, self.precision) for x in inputs))

    def tile_note(self, tiles):
        return f"({self.precision.upper()} inputs)"


@dataclass(frozen=True)
class Matmul(Product):
    """P = M @ N, launched as `launch` says (matmul.run), compared with NumPy in float64
    within float32's rounding bound."""
    launch: matmul.Launch

    @property
    def name(self):
        return self.launch.name

    def default_shapes(self, tile):
        return default_shapes(self.launch.kernel, tile)

    def run(self, code, inputs, tile, backend, check, **options):
        M, N = inputs
        return matmul.run(M, N, tile=tile, backend=backend, code=code, check=check, launch=self.launch, **options)

    def compile(self, code, tile, backend, check):
        return matmul.compile(self.launch.kernel, tile, backend, code, check, self.launch)

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
class TensorCoreMatmul(RoundedInputs, Matmul):
    """P = M @ N by a tensor-core kernel at `precision` (fp16, bf16, tf32), its inputs
    rounded to it (RoundedInputs)."""
    precision: str = "fp16"

    def run(self, code, inputs, tile, backend, check, **options):
        return super().run(code, inputs, tile, backend, check, precision=self.precision, **options)

    def compile(self, code, tile, backend, check):
        return matmul.compile(self.launch.kernel, tile, backend, code, check, self.launch, self.precision)

    def writers(self, code, inputs, tile, row, col):
        return writers(code, self.launch, *inputs, tile, row, col, self.precision)


def product(launch, precision=None):
    """The task of a matrix product launched as `launch`: a tensor-core kernel's at its
    precision (the kernel's default if None), else the FP32 one."""
    precision = launch.precision(precision)   # refuses one the kernel does not offer
    return Matmul(launch) if precision == "fp32" else TensorCoreMatmul(launch, precision)
