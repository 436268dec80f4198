"""Build the book's two editions from its one source, into _build/editions/:

  student/     what students get: the chapter notebooks as the repository holds them (the
               ones Colab's buttons open and the site shows: no solution anywhere), the
               package's wheel (exercise data without solutions), and the assignments as
               nbgrader releases them
  instructor/  the same notebooks with each exercise's solution and explanation in a cell
               under its check, every solution in one page (solutions.md), the instructor
               guide, the assignments' source notebooks (nbgrader's course directory) with
               the graded assignments' hidden tests and solutions (assignments/hidden/), and
               the question bank as Markdown (slides) and GIFT (Moodle)

    python scripts/build_editions.py [--out _build/editions]    (make editions)

tests/course/test_editions.py builds the student edition and searches every file of it for
every solution's text.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import colab_install_check

from tiling_course import exercises, questionbank, registry
from tiling_course.grading import rubric

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = [ROOT / "book" / c.notebook for c in registry.CHAPTERS]


def release_assignments(out):
    """The student notebooks of every assignment, as `nbgrader generate_assignment` makes them."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}   # nbgrader runs alembic
    with tempfile.TemporaryDirectory() as course:
        course = Path(course)
        shutil.copytree(ROOT / "assignments" / "source", course / "source")
        shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
        for a in rubric.ASSIGNMENTS:
            subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", a], cwd=course, env=env,
                           check=True, capture_output=True)
            shutil.copy(course / "release" / a / f"{a}.ipynb", out)


def student(out):
    out = Path(out)
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for nb in NOTEBOOKS:
        shutil.copy(nb, out / "notebooks")
    with tempfile.TemporaryDirectory() as work:
        wheel = colab_install_check.build_wheel(work)
        (out / "wheel").mkdir(exist_ok=True)
        shutil.copy(wheel, out / "wheel")
    release_assignments(out / "assignments")


def with_solutions(nb):
    """The notebook with a Markdown cell holding the solution under each exercise's check."""
    cells = []
    for cell in nb["cells"]:
        cells.append(cell)
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and text.startswith("exercises.check(\""):
            ex = text.split('"')[1]
            cells.append({"cell_type": "markdown", "id": f"solution-{ex}", "metadata": {"tags": ["hide-cell"]},
                          "source": exercises.solution_markdown(ex).splitlines(keepends=True)})
    return {**nb, "cells": cells}


def instructor(out):
    out = Path(out)
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in NOTEBOOKS:
        nb = with_solutions(json.loads(path.read_text()))
        (out / "notebooks" / path.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    (out / "solutions.md").write_text("# Solutions to the book's exercises\n\n" + "\n\n".join(
        exercises.solution_markdown(ex) for ex in exercises.EXERCISES) + "\n")
    shutil.copy(ROOT / "book" / "instructor.md", out)
    shutil.copytree(ROOT / "assignments" / "source", out / "assignments" / "source", dirs_exist_ok=True)
    shutil.copytree(ROOT / "assignments" / "hidden", out / "assignments" / "hidden", dirs_exist_ok=True)
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", out / "assignments")
    (out / "questionbank.md").write_text(questionbank.markdown())
    (out / "questionbank.gift").write_text(questionbank.gift())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "_build" / "editions"))
    out = Path(ap.parse_args().out)
    shutil.rmtree(out, ignore_errors=True)
    student(out / "student")
    instructor(out / "instructor")
    print(f"editions written to {out}/student and {out}/instructor")


if __name__ == "__main__":
    main()
