"""The graded assignments (tiling_course.grading, assignments/): the rubric's partial credit
as the feedback states it, and the whole nbgrader cycle on sample submissions
(tests/grading_samples/: one correct, one racy that a GPU run lets pass, one out of
bounds, one that hangs, one that does not compile): release, collect from an LMS download,
autograde, feedback, grades exported as CSV."""
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tiling_course import grading

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "grading_samples"
CORRECT = (SAMPLES / "correct.cu").read_text()
# What the cycle must report: points out of 10, and what each student's feedback names.
EXPECTED = {"correct": (10, ["full marks"]),
            "racy": (0, ["SharedMemoryRaceError", "Mds[0][0]", "thread (1, 0, 0)", "line 26", "line 22"]),
            "out_of_bounds": (0, ["OutOfBoundsError", "reads M[1]", "thread (1, 0, 0)", "line 22"]),
            "hangs": (0, ["KernelTimeoutError", "time limit of 2 s"]),
            "does_not_compile": (0, ["CompileError", "line 19"])}


def test_the_assignment_notebooks_are_in_step_with_their_rubrics():
    out = subprocess.run([sys.executable, ROOT / "scripts" / "make_assignments.py", "--check"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout


def test_every_part_of_every_assignment_is_solved_by_its_book_kernel():
    """The solutions the source notebooks hold earn full marks (so no rubric is unreachable)."""
    from tiling_course import matmul
    for assignment in grading.ASSIGNMENTS.values():
        for part in assignment.parts.values():
            score = grading.grade(assignment.id, part.variable, matmul.source(part.task.launch.kernel))
            assert score.points == score.out_of, score.feedback


def test_correct_but_slow_earns_all_but_the_speed_points():
    slow = CORRECT.replace("sum += Mds[ty][i] * Nds[i][tx];",
                           "sum += Mds[ty][i] * ((ph * TILE_WIDTH + i < k && col < n) ? N[(ph * TILE_WIDTH + i) * n"
                           " + col] : 0.0f);")
    score = grading.grade("a3_performance", "fast_src", slow)
    assert (score.points, score.out_of, score.verdict) == (7, 10, "correct but slow")
    assert "7 / 10 points (correct but slow)" in score.feedback and "loads `N` from global memory" in score.feedback


def test_correct_but_racy_earns_the_correct_points_only():
    """Every thread writes one shared word: the product is right, and checked mode says who races."""
    racy = CORRECT.replace("    if (row < m && col < n)\n", "    __shared__ float last;\n    last = sum;\n"
                           "    if (row < m && col < n)\n")
    score = grading.grade("a2_barriers_boundaries", "bounds_src", racy)
    assert (score.points, score.verdict) == (6, "correct but racy"), score.feedback
    assert "SharedMemoryRaceError" in score.feedback and "last" in score.feedback
    assert "A plain run computes the right product" in score.feedback


def test_an_empty_answer_scores_nothing_and_says_why():
    score = grading.grade("a1_naive_tiling", "naive_src", "")
    assert score.points == 0 and "never set" in score.feedback


# ------------------------------------------------------------------ the nbgrader cycle

def nbgrader(course, *args):
    # nbgrader runs alembic for its gradebook: this environment's bin/ goes first on PATH.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def submit(release, course, assignment, variable, samples):
    """Write each sample into the released notebook's %%cuda cell, named as Moodle's
    "Download all submissions" names files; returns {student id: sample name}."""
    archive = course / "downloaded" / assignment / "archive"
    archive.mkdir(parents=True)
    students = {}
    for i, sample in enumerate(samples):
        nb = json.loads(release.read_text())
        cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith(f"%%cuda {variable}"))
        cell["source"] = f"%%cuda {variable}\n{sample.read_text()}".splitlines(keepends=True)
        student = str(1001 + i)
        (archive / f"Student {sample.stem}_{student}_assignsubmission_file_{assignment}.ipynb").write_text(
            json.dumps(nb))
        students[student] = sample.stem
    return students


@pytest.fixture(scope="module")
def cycle(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    assignment = "a2_barriers_boundaries"
    (course / "source").symlink_to(ROOT / "assignments" / "source")
    (course / "nbgrader_config.py").write_text((ROOT / "assignments" / "nbgrader_config.py").read_text())
    nbgrader(course, "generate_assignment", assignment)
    release = course / "release" / assignment / f"{assignment}.ipynb"
    students = submit(release, course, assignment, "bounds_src", sorted(SAMPLES.glob("*.cu")))
    nbgrader(course, "zip_collect", assignment)
    # The course's command: nbgrader's Autograde, two submissions at once on one gradebook.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    out = subprocess.run([sys.executable, "-m", "tiling_course.grading", "autograde", assignment, "--jobs", "2"],
                         cwd=course, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    nbgrader(course, "generate_feedback", assignment)
    nbgrader(course, "export")
    return course, assignment, release, students


def test_the_release_holds_no_solution(cycle):
    _, _, release, _ = cycle
    text = release.read_text()
    assert "YOUR CODE HERE" in text and "BEGIN SOLUTION" not in text
    assert "Mds[ty][tx] = (row < m && mcol < k)" not in text and "__syncthreads" not in text


def test_the_exported_grades_are_the_rubrics(cycle):
    course, assignment, _, students = cycle
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}
    assert set(rows) == set(students)
    for student, sample in students.items():
        assert float(rows[student]["score"]) == EXPECTED[sample][0], (sample, rows[student])
        assert float(rows[student]["max_score"]) == 10 and rows[student]["assignment"] == assignment


def test_each_student_gets_feedback_naming_what_went_wrong(cycle):
    course, assignment, _, students = cycle
    for student, sample in students.items():
        html = (course / "feedback" / student / assignment / f"{assignment}.html").read_text()
        text = re.sub(r"<[^>]+>", "", html).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
        for needle in EXPECTED[sample][1]:
            assert needle in text, (sample, needle)
