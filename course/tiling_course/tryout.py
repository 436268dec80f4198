"""Running a reader's kernel the way the book does: first on the CPU runtime in checked
mode, then on the GPU if there is one, every result compared with NumPy in float64.
What it prints is the lesson: a pass says what was checked; a failure names the shape,
the element, the expected and computed values, the thread and block, or checked mode's
finding, and never stops the notebook."""
from dataclasses import dataclass, field

import numpy as np

from cudacheck import KernelError, gpu_available

from . import matmul

UNIT_ROUNDOFF = 2.0 ** -24


@dataclass
class Outcome:
    """What trying a kernel found: passed, or the first failure."""
    passed: bool
    message: str
    error: KernelError | None = None
    shape: tuple | None = None
    details: dict = field(default_factory=dict)
    kind: str = ""   # "pass", an exception's class name, "wrong values", "requirement", "shape refused"

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


def compare(P, M, N):
    """None if P matches M @ N within the bound; else a dict about the worst element."""
    ref = M.astype(np.float64) @ N.astype(np.float64)
    err = np.abs(np.asarray(P, np.float64) - ref)
    bad = err > tolerance(M, N)
    if not bad.any():
        return None
    row, col = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
    row, col = int(row), int(col)
    return dict(count=int(bad.sum()), row=row, col=col, expected=float(ref[row, col]), got=float(P[row, col]))


def writers(code, launch, M, N, tile, row, col):
    """Who stores P[row][col]: (block, block shape, threads), from a checked run that
    traces the block whose tile holds it. The kernel's own stores say it, whatever its
    geometry (a ladder rung's thread owns elements rows apart)."""
    block = launch.block_of(row, col, tile)
    shape = launch.geometry(M.shape[0], M.shape[1], N.shape[1], tile, check=False)[1]
    _, fn = matmul.run(M, N, tile=tile, backend="cpu", code=code, check=True, launch=launch, trace=[block[:2]])
    report = fn.last_launch
    out = list(report.global_counts)[2]   # the third array of the book's kernels is P
    flat = row * N.shape[1] + col
    threads = sorted({a.thread for a in report.trace if a.array == out and a.op == "W" and a.index == flat})
    return block, shape, threads


def _who(code, launch, M, N, tile, wrong):
    """A sentence on who computes the wrong element; its block and threads go into `wrong`."""
    try:
        block, shape, threads = writers(code, launch, M, N, tile, wrong["row"], wrong["col"])
    except KernelError:
        return ""
    wrong.update(block=block, threads=threads)
    blocks = f"(blocks of {shape[0]} x {shape[1]} threads)"
    if not threads:
        return f" No thread of block {block} {blocks}, whose tile holds it, stores it."
    if len(threads) > 1:
        return f" Threads {' and '.join(map(str, threads))} of block {block} {blocks} all store it."
    return f" Thread {threads[0]} of block {block} {blocks} stores it."


def default_shapes(kernel, tile):
    """Awkward shapes the kernel can take: small, non-multiples of the tile, m != k != n."""
    spec = matmul.spec(kernel)
    shapes = spec.shapes
    if spec.tile_m:   # a ladder rung: cross its own block tile, with rows and columns not multiples of 4
        return [(1, 1, 1), (spec.tile_m + 3, 37, spec.tile_n + 1), (2 * spec.tile_m - 5, 4 * spec.tile_n + 4, 9)]
    if shapes is matmul.Shapes.SQUARE:
        return [(w, w, w) for w in (1, tile + 3, 2 * tile + 1)]
    if shapes is matmul.Shapes.SQUARE_MULTIPLE:
        return [(w, w, w) for w in (tile, 2 * tile, 3 * tile)]
    if shapes is matmul.Shapes.TILE_INNER:
        return [(tile, tile, tile), (3 * tile, tile, 2 * tile)]
    return [(1, 1, 1), (tile + 1, 2 * tile - 1, tile + 3), (2 * tile + 5, 7, 3 * tile - 2)]


def run(code, kernel, tile=16, shapes=None, rng=None, gpu=None, quiet=False, *, launch=None, hint=None,
        requirement=None, trace=None):
    """Try `code` (CUDA C source of the same form as the book's `kernel`) on every shape:
    checked mode on the CPU, then the GPU if one is there (gpu=None) or asked for.

    launch: a Launch, for a kernel whose name or grid differs from `kernel`'s.
    hint: Markdown added to a failure's message.
    requirement(report, shape, tile, code): after each checked run whose product is
    right, None if the run's LaunchReport (counts, and the trace of the blocks listed
    in `trace`) meets what the caller asks of the kernel, else the failure's message.
    """
    rng = rng or np.random.default_rng()
    shapes = shapes or default_shapes(kernel, tile)
    gpu = gpu_available() if gpu is None else gpu
    launch = launch or matmul.Launch(kernel)
    code = code or matmul.source(kernel)
    name = launch.name
    places = ["the CPU runtime in checked mode"] + (["the GPU"] if gpu else [])
    more = f"\n\n**Hint:** {hint}" if hint else ""

    def fail(message, kind, error=None, shape=None, details=None):
        return _show(Outcome(False, message + more, error, shape, details or {}, kind), quiet)

    for m, k, n in shapes:
        M = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        N = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        for place in places:
            checked = place != "the GPU"
            try:
                options = {"trace": trace} if checked and trace is not None else {}
                P, fn = matmul.run(M, N, tile=tile, backend="cpu" if checked else "gpu", code=code, check=checked,
                                   launch=launch, **options)
            except KernelError as e:
                return fail(f"✗ `{name}` on {m}x{k} times {k}x{n}, {place}: **{type(e).__name__}**\n\n"
                            f"```text\n{e}\n```", type(e).__name__, e, (m, k, n))
            except ValueError as e:
                return fail(f"✗ `{name}` cannot take {m}x{k} times {k}x{n}: {e}", "shape refused", None, (m, k, n))
            except (KeyError, TypeError) as e:
                msg = e.args[0] if isinstance(e, KeyError) and e.args else e
                return fail(f"✗ `{name}` could not be launched: {msg}", "no kernel", None, (m, k, n))
            if not checked:
                P = P.get()
            w = compare(P, M, N)
            if w:
                return fail(
                    f"✗ `{name}` on {m}x{k} times {k}x{n}, {place}: {w['count']} of {m * n} elements of P "
                    f"differ from NumPy. P[{w['row']}][{w['col']}] should be {w['expected']:.6g} but is "
                    f"{w['got']:.6g}.{_who(code, launch, M, N, tile, w)}", "wrong values", None,
                    (m, k, n), w)
            if checked and requirement is not None:
                unmet = requirement(fn.last_launch, (m, k, n), tile, code)
                if unmet:
                    return fail(f"✗ `{name}` on {m}x{k} times {k}x{n} computes the right product, but {unmet}",
                                "requirement", None, (m, k, n))
    sizes = ", ".join(f"{m}x{k}·{k}x{n}" for m, k, n in shapes)
    tile_note = f" (tile {tile})" if not matmul.spec(kernel).tile_m else ""
    return _show(Outcome(True, f"✓ `{name}`{tile_note} matches NumPy in float64 on {sizes}, run on "
                               f"{' and '.join(places)}: no out-of-bounds access, race, divergent barrier or "
                               f"uninitialized read.", kind="pass"), quiet)


def _show(outcome, quiet):
    if not quiet:
        show_markdown(outcome.message)
    return outcome


def show_markdown(text):
    """Display Markdown in a notebook; print it anywhere else (a script, a plain shell)."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
        if get_ipython() is None:
            raise ImportError
        display(Markdown(text))
    except ImportError:
        print(text)
