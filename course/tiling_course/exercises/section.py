"""A chapter's exercise section as its notebook holds it (scripts/sync_notebooks.py writes
it there): an introduction, the import, then per exercise its statement, the starter cell
and the check."""
from .. import hopper, tasks

_INTRO = ("## Exercises\n\nEach exercise gives you a kernel to write or to fix (or a number to find). Edit the cell, "
          "run it, then run the check below it: it runs your kernel in checked mode on the CPU runtime, on fresh "
          "random matrices of awkward shapes, then on the GPU if there is one, compares every element with NumPy, "
          "and tells you the first thing that is wrong, with a hint. The solutions are in the instructor edition "
          "of the book, which your instructor has.")


_PROGRAM_INTRO = ("## Exercises\n\nEach exercise gives you a whole program with a bug in its host code. Fix it "
                  "in the cell and run the cell (it runs the program in checked mode on the CPU runtime), then "
                  "run the check below it: it runs your program in checked mode with more than one shape and "
                  "tells you the first thing that is wrong, with a hint. The solutions are in the instructor "
                  "edition of the book, which your instructor has.")


def cells(found):
    """The section of a chapter whose exercises are `found` (in order), as nbformat-4 cells.
    No solution: the book's notebooks are the student edition; scripts/build_editions.py
    adds a solution cell under each check for the instructor's."""
    intro = _PROGRAM_INTRO if found and all(ex.kind == "program" for ex in found) else _INTRO
    out = [_cell("markdown", intro), _cell("code", "from tiling_course import exercises")]
    head = {"value": "", "program": "%%cuda_program --cpu --check --save {var}\n"}
    for i, ex in enumerate(found, 1):
        start = ex.part(ex.starter.text()).rstrip()
        out += [_cell("markdown", f"### Exercise {i}: {ex.title}\n\n{ex.statement.rstrip()}{_time(ex)}"),
                _cell("code", head.get(ex.kind, "%%cuda {var}" + _options(ex) + "\n").format(var=ex.var) + start),
                _cell("code", f'exercises.check("{ex.id}", {ex.var})')]
    return out


def _time(ex):
    """How long the check takes, where the data says (check_seconds: the solution's check on a
    2-core machine such as Colab's, with the compiler's cache empty and then full)."""
    if not ex.check_seconds:
        return ""
    first, later = (f"{s:.0f}" if s >= 1 else "under 1" for s in ex.check_seconds)
    return (f"\n\n*The check takes about {first} s the first time (it compiles) and {later} s after, on two "
            "CPU cores such as Colab's.*")


def _options(ex):
    """What a kernel exercise's %%cuda cell needs after its variable: `--into FILE:FUNCTION` for
    an exercise on one function of a file (its region), and hopper.cu's compiler options
    (-arch=sm_90a -std=c++17) for the Hopper task."""
    into = f" --into {ex.region[0]}:{ex.region[1]}" if ex.region else ""
    if isinstance(ex.task, tasks.HopperMatmul):
        return into + "".join(f" {o}" for o in hopper.options(ex.task.precision))
    return into


def _cell(kind, source):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell
