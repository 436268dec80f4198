"""Running a reader's kernel the way the book does: first on the CPU runtime in checked
mode, then on the GPU if there is one, every result compared with NumPy (a matrix product
in float64; what a kernel must compute, and how it is launched, is its task:
tiling_course.tasks). What it prints is the lesson: a pass says what was checked; a failure names the shape,
the element, the expected and computed values, the thread and block, or checked mode's
finding, and never stops the notebook."""
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

import cudacheck
from cudacheck import KernelError, gpu_available

from . import matmul, tasks
from .tasks import UNIT_ROUNDOFF, compare, default_shapes, tolerance, writers  # noqa: F401  (kept here too)


class Verdict:
    """A pass or a failure (its `passed` and `message`): truthy on a pass, shown as its message
    (in a notebook, as Markdown)."""

    def __bool__(self):
        return self.passed

    def _repr_markdown_(self):
        return self.message

    def __repr__(self):
        return self.message


@dataclass(repr=False)
class Outcome(Verdict):
    """What trying a kernel found: passed, or the first failure."""
    passed: bool
    message: str
    error: KernelError | None = None
    shape: tuple | None = None
    details: dict = field(default_factory=dict)
    kind: str = ""   # "pass", an exception's class name, "wrong values", "requirement", "shape refused"


def _who(task, code, inputs, tile, wrong):
    """A sentence on who stores the wrong element; its block and threads go into `wrong`."""
    try:
        block, shape, threads = task.writers(code, inputs, tile, wrong["row"], wrong["col"])
    except KernelError:
        return ""
    wrong.update(block=block, threads=threads)
    blocks = f"(blocks of {shape[0]} x {shape[1]} threads)"
    if not threads:
        return f" No thread of block {block} {blocks}, {task.holder}, stores it."
    if len(threads) > 1:
        return f" {who_stores(threads, shape, f'block {block} {blocks}')} store it."
    return f" Thread {threads[0]} of block {block} {blocks} stores it."


LISTED = 4   # threads named one by one; more are summarised


def who_stores(threads, shape, where):
    """Several threads of one block, in a phrase short enough for a phone: each named when
    there are at most LISTED, else summarised ("All 256 threads of block (0, 0, 0)", "The
    16 threads with threadIdx.y == 3 of ...", "40 threads of ..., (0, 0, 0) to (7, 4, 0)")."""
    threads = sorted(threads, key=lambda t: (t[2], t[1], t[0]) if len(t) == 3 else t)
    if len(threads) <= LISTED:
        return f"Threads {', '.join(map(str, threads[:-1]))} and {threads[-1]} of {where} all"
    size = 1
    for d in shape:
        size *= d
    if len(threads) == size:
        return f"All {size} threads of {where}"
    for axis, name in enumerate("xyz"):
        values = {t[axis] for t in threads}
        if len(values) == 1:
            value = values.pop()
            others = size // (shape[axis] if axis < len(shape) else 1)
            if len(threads) == others:
                return f"The {len(threads)} threads with threadIdx.{name} == {value} of {where}"
    return f"{len(threads)} threads of {where}, {threads[0]} to {threads[-1]},"


@contextmanager
def every_check():
    """Checked mode with all its checks, whatever the reader set: a race on global memory
    is what turns a histogram's lucky right counts on the CPU runtime into a failure."""
    before = cudacheck.config.global_races
    cudacheck.config.global_races = True
    try:
        yield
    finally:
        cudacheck.config.global_races = before


def run(code, kernel, tile=16, shapes=None, rng=None, gpu=None, quiet=False, *, launch=None, hint=None,
        requirement=None, trace=None, precision=None):
    """Try `code` on every shape: checked mode on the CPU (every check on, global races
    included), then the GPU if one is there (gpu=None) or asked for. Never a plain run on
    the CPU, where threads of a block take turns and a race can give the right result.
    Returns an Outcome (truthy on a pass) and shows its message.

    kernel: what the code computes and how it is launched: the name of a book kernel (a
    matrix product of the same form, launched as `launch`, a matmul.Launch, says, or as the
    book launches that kernel), or a tiling_course.tasks.Task (tasks.BlockTranspose()).
    code: CUDA C source; None tries the book's own kernel.
    precision: a tensor-core kernel's inputs (fp16, bf16, tf32; its default if None).
    shapes: what the task takes ((m, k, n) for a product, (height, width) for a transpose);
    None: the task's default awkward shapes for this tile.
    hint: Markdown added to a failure's message.
    requirement(report, shape, tile, code): after each checked run whose result is right,
    None if the run's LaunchReport (counts, and the trace of the blocks listed in `trace`)
    meets what the caller asks of the kernel, else the failure's message.
    """
    task = kernel if isinstance(kernel, tasks.Task) else tasks.product(launch or matmul.Launch(kernel), precision)
    rng = rng or np.random.default_rng()
    shapes = shapes or task.default_shapes(tile)
    gpu = gpu_available() if gpu is None else gpu
    code = code or task.source()
    name = task.name
    places = ["the CPU runtime in checked mode"] + (["the GPU"] if gpu else [])
    more = f"\n\n**Hint:** {hint}" if hint else ""

    noted = []   # checked mode's warnings, told in the message rather than printed to stderr

    def also():
        return f"\n\n{noted[0]}" if noted else ""

    def fail(message, kind, error=None, shape=None, details=None):
        return _show(Outcome(False, message + also() + more, error, shape, details or {}, kind), quiet)

    for shape in shapes:
        shape = tuple(shape)
        inputs = task.inputs(shape, rng)
        on = task.describe(shape)
        for place in places:
            checked = place != "the GPU"
            try:
                options = {"trace": trace} if checked and trace is not None else {}
                with every_check(), _noting(noted):
                    result, fn = task.run(code, inputs, tile, "cpu" if checked else "gpu", checked, **options)
            except KernelError as e:
                return fail(f"✗ `{name}` on {on}, {place}: **{type(e).__name__}**\n\n```text\n{e}\n```",
                            type(e).__name__, e, shape)
            except ValueError as e:
                return fail(f"✗ `{name}` cannot take {on}: {e}", "shape refused", None, shape)
            except (KeyError, TypeError) as e:
                msg = e.args[0] if isinstance(e, KeyError) and e.args else e
                return fail(f"✗ `{name}` could not be launched: {msg}", "no kernel", None, shape)
            if not checked:
                result = result.get()   # from the GPU
            w = task.compare(result, inputs, tile)
            if w:
                a = w["array"]
                element = w.get("element", f"{a}[{w['row']}][{w['col']}]")
                with _noting(noted):   # _who runs the kernel again, to find who stores the element
                    who = _who(task, code, inputs, tile, w)
                return fail(
                    f"✗ `{name}` on {on}, {place}: {w['count']} of {w['total']} elements of {a} differ from "
                    f"{task.reference}. {element} should be {w['expected']:.6g} but is "
                    f"{w['got']:.6g}.{who}", "wrong values", None, shape, w)
            if checked and requirement is not None:
                unmet = requirement(fn.last_launch, shape, tile, code)
                if unmet:
                    return fail(f"✗ `{name}` on {on} computes the right {task.result}, but {unmet}", "requirement",
                                None, shape)
    sizes = ", ".join(task.size(tuple(s)) for s in shapes)
    note = task.tile_note([tile])
    return _show(Outcome(True, f"✓ `{name}`{' ' + note if note else ''} {task.verdict} on {sizes}, run on "
                               f"{' and '.join(places)}: no out-of-bounds access, race, divergent barrier or "
                               f"uninitialized read.{also()}", kind="pass"), quiet)


@contextmanager
def _noting(noted):
    """Checked mode's SameValueWriteWarning (threads storing one value into one element with
    nothing ordering them: a race by CUDA's memory model, harmless) as a sentence of the
    lesson, once, instead of a warning on stderr; any other warning passes on as it came."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if issubclass(w.category, cudacheck.SameValueWriteWarning):
            if not noted:
                first = str(w.message).split(". ")[0]
                noted.append(f"Checked mode also notes (`SameValueWriteWarning`): {first}. By CUDA's memory model "
                             "that is a race, but a harmless one: every outcome is the same value.")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


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
