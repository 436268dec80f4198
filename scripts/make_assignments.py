"""Write the graded assignments' source notebooks (assignments/source/<id>/<id>.ipynb, in
nbgrader's format) from their rubrics (course/tiling_course/assignments/rubrics.toml) and
the book's kernels, which are the solutions.

Each notebook: the chapters' Colab set-up cell, the assignment's rubric, then per part its
statement, a %%cuda cell whose kernel body is an nbgrader solution region (the student
release keeps the signature and gets a `// YOUR CODE HERE` body), and a locked graded cell
that calls tiling_course.grading.award (its points are the cell's partial credit).

    python scripts/make_assignments.py          # rewrite them
    python scripts/make_assignments.py --check  # exit 1 if any is out of step (tests run this)
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "runtime"), str(ROOT / "course"), str(ROOT / "scripts")]
from sync_notebooks import setup_cell_source  # noqa: E402

from tiling_course import grading, matmul  # noqa: E402

SOURCE = ROOT / "assignments" / "source"
_ITEM = {"correct": "correct on every shape", "clean": "passes checked mode", "speed": "loads within the bound"}


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
    """The %%cuda cell: the book's kernel, its body between the solution markers."""
    lines = matmul.source(part.task.launch.kernel).rstrip("\n").split("\n")
    head = next(i for i, line in enumerate(lines) if "__global__" in line)
    open_brace = next(i for i in range(head, len(lines)) if lines[i].rstrip().endswith("{"))
    body = lines[open_brace + 1:-1]
    assert lines[-1] == "}", f"{part.task.launch.kernel}: the kernel should end the file"
    return "\n".join([f"%%cuda {part.variable}", *lines[:open_brace + 1], "    // BEGIN SOLUTION", *body,
                      "    // END SOLUTION", "}"])


def notebook(assignment):
    rows = "\n".join(f"| {p.title} | " + ", ".join(f"{_ITEM[k]}: {v}" for k, v in p.points.items())
                     + f" | {sum(p.points.values())} |" for p in assignment.parts.values())
    total = sum(sum(p.points.values()) for p in assignment.parts.values())
    intro = (f"# {assignment.title}\n\nWrite each kernel in its `%%cuda` cell, then run the graded cell below it: "
             "it runs your kernel as the grader will, on the CPU runtime in checked mode, on fixed random "
             "matrices of awkward shapes, and shows your points and the first thing that is wrong (thread, "
             "element, line).\n\n| part | points | out of |\n|---|---|---|\n" + rows + f"\n\nTotal: {total} points. "
             "Partial credit: a kernel that computes the right product but that checked mode finds racy (or "
             "with another finding) earns the *correct* points only; a correct, clean kernel that is slow earns "
             f"all but the *speed* points. A kernel stopped after {assignment.time_limit:g} s, or one that does "
             "not compile, earns nothing.")
    cells = [_cell("markdown", intro, cell_id="intro"),
             _cell("code", setup_cell_source(), {"tags": ["colab-setup"]}, "colab-setup")]
    for i, part in enumerate(assignment.parts.values(), 1):
        cells += [_cell("markdown", f"## Part {i}: {part.title}\n\n{part.statement}", cell_id=f"part-{i}"),
                  _cell("code", solution_cell(part), _nbgrader(part.variable, solution=True), part.variable),
                  _cell("code", "from tiling_course import grading\n"
                        f'grading.award("{assignment.id}", "{part.variable}", {part.variable})',
                        _nbgrader(f"grade_{part.variable}", points=sum(part.points.values())),
                        f"grade-{part.variable}")]
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                         "name": "python3"},
                                         "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def main(check=False):
    stale = []
    for assignment in grading.ASSIGNMENTS.values():
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
