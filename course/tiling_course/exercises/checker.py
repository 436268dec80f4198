"""The checker: an answer to an exercise (a kernel's CUDA C, a whole program, or a number)
run and judged, and the verdict as a Result, which shows itself once in a notebook. A
wrong answer, or a check that itself fails, is a Result, never an exception."""
import math

from cudacheck import KernelError

from .. import programs, tryout
from .values import accepts


class Result(tryout.Verdict):
    """What check() found; truthy on a pass. Shown once in a notebook, wherever check()
    is called: check() displays it, and the cell's result does not display it again."""

    def __init__(self, passed, message, kind, outcome=None):
        self.passed = passed
        self.message = message
        self.kind = kind                 # "pass", an exception's class name, "wrong values", ...
        self.outcome = outcome           # the tiling_course.tryout.Outcome, for kernel exercises
        self.error = getattr(outcome, "error", None)
        self.shape = getattr(outcome, "shape", None)
        self.details = getattr(outcome, "details", {})
        self._shown_in = None

    def _ipython_display_(self):
        if self._shown_in is not None and self._shown_in == execution_count():
            return
        tryout.show_markdown(self.message)

    def show(self):
        """Display it now, and not again as the result of the same notebook cell."""
        tryout.show_markdown(self.message)
        self._shown_in = execution_count()


def execution_count():
    """The notebook's current cell number; None outside IPython."""
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError:
        return None
    return None if ip is None else ip.execution_count


def verdict(ex, source):
    """The Result of checking `source` (CUDA C, a program's source, or a number) against
    exercise `ex`."""
    try:
        return {"value": _check_value, "program": _check_program}.get(ex.kind, _check_kernel)(ex, source)
    except Exception as e:   # a checker must never stop the notebook
        return Result(False, f"✗ **Exercise {ex.id}**: the check itself failed: {type(e).__name__}: {e}",
                      "checker error")


def _head(ex, passed):
    return f"✓ **Exercise {ex.id} solved.** " if passed else f"**Exercise {ex.id} ({ex.title}): not yet.**\n\n"


def _check_kernel(ex, source):
    if not isinstance(source, str) or not source.strip():
        return Result(False, _head(ex, False) + "✗ `check` takes the kernel's CUDA C source as a string: the "
                      f"variable the `%%cuda` cell saved (`{ex.var}`).\n\n**Hint:** {ex.hint}", "no source")
    source, lines = ex.whole(source)
    # A part of a file (the exercise's region) is checked in place: say where its lines went.
    where = "" if lines is None else f"\n\n(Your cell: {ex.region[0]}:{lines[0]}–{lines[1]})"
    passes = []
    for tile in ex.tiles:
        out = tryout.run(source, ex.task, tile=tile, shapes=list(ex.shapes), quiet=True, hint=ex.hint,
                         requirement=ex.requirement, trace=ex.trace)
        if not out:
            return Result(False, _head(ex, False) + out.message + where, out.kind, out)
        passes.append(out)
    message = passes[0].message.removeprefix("✓ ")
    note = ex.task.tile_note(ex.tiles[:1])
    if len(ex.tiles) > 1 and note:
        message = message.replace(note, ex.task.tile_note(ex.tiles), 1)
    if ex.requirement is not None:
        message += " " + ex.requirement_passed
    return Result(True, _head(ex, True) + message, "pass", passes[-1])


def _check_program(ex, source):
    """Run the program in checked mode with each of the exercise's command lines; the
    first thing wrong fails it: an exception (its class, the line), a non-zero exit code,
    a warning, then its own checks (PASSED for each, FAILED for none)."""
    hint = f"\n\n**Hint:** {ex.hint}"
    if not isinstance(source, str) or not source.strip():
        return Result(False, _head(ex, False) + "✗ `check` takes the program's source as a string: the variable "
                      f"the `%%cuda_program --save {ex.var}` cell saved.{hint}", "no source")
    for args in ex.runs:
        how = f"`program {' '.join(args)}`" if args else "the program with its default shape"
        try:
            with tryout.every_check():
                result = programs.run(source, check=True, args=args)
        except KernelError as e:
            return Result(False, _head(ex, False) + f"✗ {how}, checked mode: **{type(e).__name__}**\n\n"
                          f"```text\n{e}\n```{hint}", type(e).__name__)
        if result.exit_code:
            said = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["(nothing)"]
            return Result(False, _head(ex, False) + f"✗ {how} exited with code {result.exit_code}; its last words: "
                          f"`{said[0]}`{hint}", "exit code")
        if result.warnings:
            w = result.warnings[0]
            return Result(False, _head(ex, False) + f"✗ {how}, checked mode: **{type(w).__name__}** (line "
                          f"{w.line})\n\n```text\n{w}\n```{hint}", type(w).__name__)
        passed, failed = result.stdout.count("PASSED"), result.stdout.count("FAILED")
        if failed or not passed:
            return Result(False, _head(ex, False) + f"✗ {how} ran cleanly, but its own check says FAILED "
                          f"{failed} time(s) and PASSED {passed}:\n\n```text\n{result.stdout.rstrip()}\n```{hint}",
                          "wrong values")
    return Result(True, _head(ex, True) + f"It ran {len(ex.runs)} time(s) in checked mode: every check PASSED, "
                  "no finding, no warning, exit code 0.", "pass")


def _check_value(ex, value):
    head = _head(ex, False)
    hint = f"\n\n**Hint:** {ex.hint}"
    if value is None:
        return Result(False, head + f"✗ No answer yet: set `{ex.var}` to your number and run the cell again."
                      + hint, "no answer")
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    try:
        got = float(value)
    except (TypeError, ValueError):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    if math.isfinite(got) and accepts(ex, got):
        return Result(True, _head(ex, True) + f"{_fmt(got)} {ex.unit}: that is {ex.answer_from}.", "pass")
    return Result(False, head + f"✗ {_fmt(got)} is not {ex.answer_from}." + hint, "wrong value")


def _fmt(x):
    return f"{int(x):,}" if float(x).is_integer() else f"{x:.4g}"
