"""Running a reader's kernel the way the book does: first on the CPU runtime in checked
mode, then on the GPU if there is one, every result compared with NumPy in float64.
What it prints is the lesson: a pass says what was checked; a failure names the shape,
the element, the expected and computed values, the thread and block, or checked mode's
finding, and never stops the notebook."""
from dataclasses import dataclass, field

import numpy as np

from . import matmul
from .errors import KernelError
from .gpu import gpu_available

UNIT_ROUNDOFF = 2.0 ** -24


@dataclass
class Outcome:
    """What trying a kernel found: passed, or the first failure."""
    passed: bool
    message: str
    error: KernelError | None = None
    shape: tuple | None = None
    details: dict = field(default_factory=dict)

    def __bool__(self):
        return self.passed

    def _repr_markdown_(self):
        return self.message

    def __repr__(self):
        return self.message


def tolerance(M, N):
    """Elementwise bound on a float32 dot product's rounding error: 2 k u |M||N|."""
    k = M.shape[1]
    return 2 * k * UNIT_ROUNDOFF * (np.abs(M.astype(np.float64)) @ np.abs(N.astype(np.float64))) + 1e-30


def compare(P, M, N, tile):
    """None if P matches M @ N within the bound; else a dict about the worst element."""
    ref = M.astype(np.float64) @ N.astype(np.float64)
    err = np.abs(np.asarray(P, np.float64) - ref)
    bad = err > tolerance(M, N)
    if not bad.any():
        return None
    row, col = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
    return dict(count=int(bad.sum()), row=int(row), col=int(col), expected=float(ref[row, col]),
                got=float(P[row, col]), block=(col // tile, row // tile, 0), thread=(col % tile, row % tile, 0))


def default_shapes(kernel, tile):
    """Awkward shapes the kernel can take: small, non-multiples of the tile, m != k != n."""
    shapes = matmul.KERNELS[kernel].shapes
    if shapes == "square":
        return [(w, w, w) for w in (1, tile + 3, 2 * tile + 1)]
    if shapes == "square-multiple":
        return [(w, w, w) for w in (tile, 2 * tile, 3 * tile)]
    if shapes == "tile-inner":
        return [(tile, tile, tile), (3 * tile, tile, 2 * tile)]
    return [(1, 1, 1), (tile + 1, 2 * tile - 1, tile + 3), (2 * tile + 5, 7, 3 * tile - 2)]


def run(code, kernel, tile=16, shapes=None, rng=None, gpu=None, quiet=False):
    """Try `code` (CUDA C source of the same form as the book's `kernel`) on every shape:
    checked mode on the CPU, then the GPU if one is there (gpu=None) or asked for."""
    rng = rng or np.random.default_rng()
    shapes = shapes or default_shapes(kernel, tile)
    gpu = gpu_available() if gpu is None else gpu
    name = matmul.KERNELS[kernel].function
    places = ["the CPU runtime in checked mode"] + (["the GPU"] if gpu else [])
    for m, k, n in shapes:
        M = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        N = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        for place in places:
            try:
                P = matmul.multiply(M, N, kernel=kernel, tile=tile, code=code,
                                    backend="gpu" if place == "the GPU" else "cpu", check=place != "the GPU")
            except KernelError as e:
                return _show(Outcome(False, f"✗ `{name}` on {m}x{k} times {k}x{n}, {place}: "
                                            f"**{type(e).__name__}**\n\n```text\n{e}\n```", e, (m, k, n)), quiet)
            except ValueError as e:
                return _show(Outcome(False, f"✗ `{name}` cannot take {m}x{k} times {k}x{n}: {e}", None, (m, k, n)),
                             quiet)
            if place == "the GPU":
                P = P.get()
            wrong = compare(P, M, N, tile)
            if wrong:
                w = wrong
                return _show(Outcome(
                    False, f"✗ `{name}` on {m}x{k} times {k}x{n}, {place}: {w['count']} of {m * n} elements of P "
                    f"differ from NumPy. P[{w['row']}][{w['col']}] should be {w['expected']:.6g} but is "
                    f"{w['got']:.6g}; thread {w['thread']} of block {w['block']} computes it "
                    f"(with {tile} x {tile} blocks).", None, (m, k, n), w), quiet)
    sizes = ", ".join(f"{m}x{k}·{k}x{n}" for m, k, n in shapes)
    return _show(Outcome(True, f"✓ `{name}` (tile {tile}) matches NumPy in float64 on {sizes}, run on "
                               f"{' and '.join(places)}: no out-of-bounds access, race, divergent barrier or "
                               f"uninitialized read."), quiet)


def _show(outcome, quiet):
    if not quiet:
        try:
            from IPython.display import Markdown, display
            display(Markdown(outcome.message))
        except ImportError:
            print(outcome.message)
    return outcome
