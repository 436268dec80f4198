"""Write the assignments' source notebooks (assignments/source/<id>/<id>.ipynb, in
nbgrader's format) from their rubrics (course/tiling_course/assignments/rubrics.toml) and
their solutions: the book's kernels for the practice assignments (a1-a3), the instructor's
assignments/hidden/solutions/<id>.cu for the graded ones (g1-g3).

Each notebook: the chapters' Colab set-up cell, the assignment's rubric, then per part its
statement, a %%cuda cell whose kernel body is an nbgrader solution region (the student
release keeps the signature and gets a `// YOUR CODE HERE` body), and a locked graded cell
that calls tiling_course.grading.selfcheck.award: the student's self-check. The grade itself comes
from the CUDA of the %%cuda cell, run by the grader in a sandbox (tiling_course.grading.autograde);
the graded cell's output is where the grader puts its feedback and score. A graded
assignment also asks for the student's id, and shows the question of their variant.

    python scripts/make_assignments.py          # rewrite them
    python scripts/make_assignments.py --check  # exit 1 if any is out of step (tests run this)
"""
import json
import sys
from pathlib import Path

from sync_notebooks import setup_cell_source

from tiling_course import matmul
from tiling_course.grading import rubric

ROOT = Path(__file__).resolve().parent.parent

SOURCE = ROOT / "assignments" / "source"
SOLUTIONS = ROOT / "assignments" / "hidden" / "solutions"
_ITEM = {"correct": "correct on every shape", "clean": "passes checked mode", "speed": "meets the speed requirement"}


def _nbgrader(grade_id, solution=False, points=None):
    meta = {"grade_id": grade_id, "schema_version": 3, "solution": solution, "grade": points is not None,
            "locked": not solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _cell(kind, source, metadata=None, cell_id=""):
    cell = {"cell_type": kind, "id": cell_id, "metadata": metadata or {}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def solution_cell(part):
    """The %%cuda cell: the solution, its kernel's body between the solution markers."""
    if part.graded:
        text = (SOLUTIONS / f"{part.assignment}.cu").read_text()
        lines = text.rstrip("\n").split("\n")
        while lines[0].startswith("//"):   # the file's own note, for the instructor
            lines.pop(0)
    else:
        lines = matmul.source(part.task.launch_of.kernel).rstrip("\n").split("\n")
    head = next(i for i, line in enumerate(lines) if "__global__" in line)
    open_brace = next(i for i in range(head, len(lines)) if lines[i].rstrip().endswith("{"))
    body = lines[open_brace + 1:-1]
    assert lines[-1] == "}", f"{part.variable}: the kernel should end the file"
    return "\n".join([f"%%cuda {part.variable}", *lines[:open_brace + 1], "    // BEGIN SOLUTION", *body,
                      "    // END SOLUTION", "}"])


def _template(part):
    """The statement with its variant's fields named, not filled: ⟨TILE_M⟩."""
    class Named(dict):
        def __missing__(self, key):
            return f"⟨{key}⟩"
    return ("The question, with ⟨fields⟩ where your variant's values go (the cell below shows them):\n\n"
            + part.statement.format_map(Named()))


def notebook(assignment):
    rows = "\n".join(f"| {p.title} | " + ", ".join(f"{_ITEM[k]}: {v}" for k, v in p.points.items())
                     + f" | {sum(p.points.values())} |" for p in assignment.parts.values())
    total = sum(sum(p.points.values()) for p in assignment.parts.values())
    how = ("Write each kernel in its `%%cuda` cell, then run the graded cell below it: it runs your kernel on the "
           "CPU runtime in checked mode, on fixed random matrices of awkward shapes, and shows your points and the "
           "first thing that is wrong (thread, element, line).")
    if assignment.graded:
        how = ("Set your student id below: your question (tile sizes, layout) depends on it. Write each kernel in "
               "its `%%cuda` cell, then run the self-check below it: it runs your kernel on the CPU runtime in "
               "checked mode on a few public shapes and shows what the grader would say about them. The grade comes "
               "from hidden tests: the grader takes the CUDA of your `%%cuda` cells (nothing else in the notebook "
               "is run) and tests it, in your variant, on other shapes.")
    intro = (f"# {assignment.title}\n\n{how}\n\n| part | points | out of |\n|---|---|---|\n" + rows +
             f"\n\nTotal: {total} points. Partial credit: a kernel that computes the right result but that checked "
             "mode finds racy (or with another finding) earns the *correct* points only; a correct, clean kernel that "
             f"is slow earns all but the *speed* points. A kernel stopped after {assignment.time_limit:g} s, one that "
             "crashes, and one that does not compile earn nothing.")
    cells = [_cell("markdown", intro, cell_id="intro"),
             _cell("code", setup_cell_source(), {"tags": ["colab-setup"]}, "colab-setup")]
    student = ", STUDENT_ID" if assignment.graded else ""
    if assignment.graded:
        cells.append(_cell("code", 'STUDENT_ID = ""   # your student id, as the course lists it', {}, "student-id"))
    for i, part in enumerate(assignment.parts.values(), 1):
        statement = _template(part) if part.graded else part.statement
        cells.append(_cell("markdown", f"## Part {i}: {part.title}\n\n{statement}", cell_id=f"part-{i}"))
        if part.graded:
            cells.append(_cell("code", "from tiling_course.grading import selfcheck\n"
                               f'selfcheck.show_variant("{assignment.id}", "{part.variable}", STUDENT_ID)',
                               _nbgrader(f"variant_{part.variable}"), f"variant-{part.variable}"))
        cells += [_cell("code", solution_cell(part), _nbgrader(part.variable, solution=True), part.variable),
                  _cell("code", "from tiling_course.grading import selfcheck\n"
                        f'selfcheck.award("{assignment.id}", "{part.variable}", {part.variable}{student})',
                        _nbgrader(f"grade_{part.variable}", points=sum(part.points.values())),
                        f"grade-{part.variable}")]
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                         "name": "python3"},
                                         "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def main(check=False):
    stale = []
    for assignment in rubric.ASSIGNMENTS.values():
        path = SOURCE / assignment.id / f"{assignment.id}.ipynb"
        text = json.dumps(notebook(assignment), indent=1, ensure_ascii=False) + "\n"
        if not path.exists() or path.read_text() != text:
            stale.append(path.name)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    if check and stale:
        print("out of step with their rubrics: " + ", ".join(stale) + " (run python scripts/make_assignments.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv))
