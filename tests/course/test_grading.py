"""The assignments (tiling_course.grading, assignments/): the rubric's partial credit as the
feedback states it, every variant of the graded assignments solvable, and the whole nbgrader
cycle, its notebooks graded from their CUDA in the sandbox (tiling_course.grading.autograde), on
sample submissions (tests/support/grading_samples/: one correct, one racy that a GPU run lets pass,
one out of bounds, one that hangs, one that does not compile; a notebook whose graded cell,
its points and its Python were tampered with; a graded assignment's answers for the
student's own variant and for another's): release, collect from an LMS download, autograde,
feedback, grades exported as CSV. The attacks on the grader: tests/course/test_grading_attacks.py."""
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import GRADING_SAMPLES, ROOT
from tiling_course.grading import judge, rubric, selfcheck, variants

SAMPLES = GRADING_SAMPLES
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


HIDDEN = ROOT / "assignments" / "hidden"


def test_every_practice_part_is_solved_by_its_book_kernel():
    """The solutions the source notebooks hold earn full marks (so no rubric is unreachable)."""
    from tiling_course import matmul
    for assignment in rubric.ASSIGNMENTS.values():
        for part in assignment.parts.values():
            if not part.graded:
                score = selfcheck.grade(assignment.id, part.variable, matmul.source(part.task.launch_of.kernel))
                assert score.points == score.out_of, score.feedback


def covering(part):
    """Student ids whose variants, together, take every choice of every axis."""
    missing = {(axis, i) for axis, choices in part.variants.items() for i in range(len(choices))}
    ids = []
    for n in range(10000):
        v = variants.of(part, f"student-{n}")
        got = {(axis, i) for axis, choices in part.variants.items() for i, c in enumerate(choices)
               if all(v[k] == c[k] for k in c)}
        if got & missing:
            ids.append(f"student-{n}")
            missing -= got
        if not missing:
            return ids
    raise AssertionError(f"no ids draw {missing}")


@pytest.mark.parametrize("assignment", [a.id for a in rubric.ASSIGNMENTS.values() if a.graded])
def test_every_choice_of_every_graded_variant_is_solvable(assignment):
    """The instructor's solution, in each variant, passes the self-check (public shapes):
    every tile size, layout, border and operation a student can draw has an answer."""
    for part in rubric.ASSIGNMENTS[assignment].parts.values():
        for sid in covering(part):
            source = judge.solution(HIDDEN, assignment, variants.of(part, sid))
            score = selfcheck.grade(assignment, part.variable, source, sid)
            assert score.points == score.out_of, (sid, variants.of(part, sid), score.feedback)


def test_the_hidden_tests_grade_the_solutions_in_the_sandbox(grader_warm_cache):
    grader = judge.Judge(hidden=HIDDEN, warm=grader_warm_cache)
    for assignment in (a for a in rubric.ASSIGNMENTS.values() if a.graded):
        part = next(iter(assignment.parts.values()))
        for sid in ("s0000001",):
            result = grader.grade(assignment.id, {part.variable: judge.solution(HIDDEN, assignment.id,
                                                                               variants.of(part, sid))}, sid)
            assert result.points == result.out_of == 10, result.feedback
            assert "tests run in a sandbox" in result.feedback and f"`{sid}`" in result.feedback


def test_a_graded_part_is_wrong_in_each_way_the_rubric_names():
    """A rectangular-tile kernel that stages nothing is slow; one without its second barrier
    is racy; one that forgets the transposed layout computes the wrong product."""
    part = rubric.part("g1_rect_tiles", "rect_src")
    sid = next(f"s{n}" for n in range(1000) if variants.of(part, f"s{n}")["layout"] == "NN"
               and variants.of(part, f"s{n}")["TILE_K"] == 4)
    source = judge.solution(HIDDEN, "g1_rect_tiles", variants.of(part, sid))
    slow = source.replace("sum += As[ty][i] * Bs[i][tx];", "sum += As[ty][i] * ((ph * TILE_K + i < k && col < n) "
                          "? B[(ph * TILE_K + i) * n + col] : 0.0f);")
    score = selfcheck.grade("g1_rect_tiles", "rect_src", slow, sid)
    assert (score.points, score.verdict) == (7, "correct but slow"), score.feedback
    assert "loads `B` (the B operand)" in score.feedback
    racy = source.replace("            sum += As[ty][i] * Bs[i][tx];\n        __syncthreads();",
                          "            sum += As[ty][i] * Bs[i][tx];")
    assert racy != source
    score = selfcheck.grade("g1_rect_tiles", "rect_src", racy, sid)
    assert score.points in (0, 4) and "racy" in score.verdict, score.feedback
    other = next(f"s{n}" for n in range(1000) if variants.of(part, f"s{n}")["layout"] == "NT")
    score = selfcheck.grade("g1_rect_tiles", "rect_src", source, other)
    assert score.points == 0 and score.verdict == "wrong values", score.feedback


def test_correct_but_slow_earns_all_but_the_speed_points():
    slow = CORRECT.replace("sum += Mds[ty][i] * Nds[i][tx];",
                           "sum += Mds[ty][i] * ((ph * TILE_WIDTH + i < k && col < n) ? N[(ph * TILE_WIDTH + i) * n"
                           " + col] : 0.0f);")
    score = selfcheck.grade("a3_performance", "fast_src", slow)
    assert (score.points, score.out_of, score.verdict) == (7, 10, "correct but slow")
    assert "7 / 10 points (correct but slow)" in score.feedback and "loads `N` from global memory" in score.feedback


def test_correct_but_racy_earns_the_correct_points_only():
    """Every thread writes one shared word: the product is right, and checked mode says who races."""
    racy = CORRECT.replace("    if (row < m && col < n)\n", "    __shared__ float last;\n    last = sum;\n"
                           "    if (row < m && col < n)\n")
    score = selfcheck.grade("a2_barriers_boundaries", "bounds_src", racy)
    assert (score.points, score.verdict) == (6, "correct but racy"), score.feedback
    assert "SharedMemoryRaceError" in score.feedback and "last" in score.feedback
    assert "A plain run computes the right product" in score.feedback


def test_an_empty_answer_scores_nothing_and_says_why():
    score = selfcheck.grade("a1_naive_tiling", "naive_src", "")
    assert score.points == 0 and "never set" in score.feedback


# ------------------------------------------------------------------ the nbgrader cycle

def nbgrader(course, *args):
    # nbgrader runs alembic for its gradebook: this environment's bin/ goes first on PATH.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


RACY_BUT_RIGHT = CORRECT.replace("    if (row < m && col < n)\n", "    __shared__ float last;\n    last = sum;\n"
                                 "    if (row < m && col < n)\n")


def tampered(nb, variable):
    """A notebook whose graded cell is replaced by `10.0` with 1000 points in its metadata,
    with a Python cell that patches the grading function; and one whose graded cell is
    deleted."""
    patched = json.loads(json.dumps(nb))
    for cell in patched["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"grade_{variable}":
            cell["source"] = "10.0"
            cell["metadata"]["nbgrader"]["points"] = 1000
    patched["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                             "source": "import tiling_course.grading.selfcheck as g\ng.award = lambda *a, **k: 10.0"})
    deleted = json.loads(json.dumps(nb))
    deleted["cells"] = [c for c in deleted["cells"]
                        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") != f"grade_{variable}"]
    return patched, deleted


def submit(release, course, assignment, variable, sources):
    """Write each source into the released notebook's %%cuda cell (a notebook as it is, for
    a dict), named as Moodle's "Download all submissions" names files; sources maps a
    student id to (a name, the source or notebook)."""
    archive = course / "downloaded" / assignment / "archive"
    archive.mkdir(parents=True)
    for student, (name, source) in sources.items():
        nb = json.loads(release.read_text())
        cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith(f"%%cuda {variable}"))
        cell["source"] = f"%%cuda {variable}\n{source}".splitlines(keepends=True)
        if isinstance(source, tuple):   # (the kernel, how the notebook is tampered with)
            cell["source"] = f"%%cuda {variable}\n{source[0]}".splitlines(keepends=True)
            nb = tampered(nb, variable)[source[1]]
        (archive / f"Student {name}_{student}_assignsubmission_file_{assignment}.ipynb").write_text(json.dumps(nb))


@pytest.fixture(scope="module")
def cycle(tmp_path_factory, grader_warm_cache):
    """A practice assignment (a2, five samples and two tampered notebooks) and a graded one
    (g1: one student's answer for their own variant, the same answer from a student whose
    variant differs) through nbgrader and the sandboxed autograde."""
    course = tmp_path_factory.mktemp("course")
    (course / "source").symlink_to(ROOT / "assignments" / "source")
    (course / "hidden").symlink_to(HIDDEN)
    (course / "nbgrader_config.py").write_text((ROOT / "assignments" / "nbgrader_config.py").read_text())
    samples = {str(1001 + i): (p.stem, p.read_text()) for i, p in enumerate(sorted(SAMPLES.glob("*.cu")))}
    samples["1101"] = ("patched", (RACY_BUT_RIGHT, 0))
    samples["1102"] = ("deleted", ((SAMPLES / "out_of_bounds.cu").read_text(), 1))
    part = rubric.part("g1_rect_tiles", "rect_src")
    other = next(f"{n}" for n in range(2002, 3000) if variants.of(part, str(n))["layout"]
                 != variants.of(part, "2001")["layout"])
    answer = judge.solution(HIDDEN, "g1_rect_tiles", variants.of(part, "2001"))
    graded = {"2001": ("own", answer), other: ("borrowed", answer)}
    releases = {}
    for assignment, variable, sources in (("a2_barriers_boundaries", "bounds_src", samples),
                                          ("g1_rect_tiles", "rect_src", graded)):
        nbgrader(course, "generate_assignment", assignment)
        releases[assignment] = course / "release" / assignment / f"{assignment}.ipynb"
        submit(releases[assignment], course, assignment, variable, sources)
        nbgrader(course, "zip_collect", assignment)
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        # The course's command, several at once; and plain nbgrader, which the course's
        # configuration makes grade the same way, never executing a notebook.
        command = (["-m", "tiling_course.grading", "autograde", assignment, "--jobs", "2",
                    f"--warm={grader_warm_cache}"] if assignment.startswith("a") else
                   ["-m", "nbgrader", "autograde", assignment, f"--GradeInSandbox.warm={grader_warm_cache}"])
        out = subprocess.run([sys.executable, *command], cwd=course, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-3000:]
        nbgrader(course, "generate_feedback", assignment)
    nbgrader(course, "export")
    students = {s: name for s, (name, _) in samples.items()}
    return course, releases, students, {s: name for s, (name, _) in graded.items()}


def test_the_release_holds_no_solution(cycle):
    _, releases, _, _ = cycle
    text = releases["a2_barriers_boundaries"].read_text()
    assert "YOUR CODE HERE" in text and "BEGIN SOLUTION" not in text
    assert "Mds[ty][tx] = (row < m && mcol < k)" not in text and "__syncthreads" not in text
    text = releases["g1_rect_tiles"].read_text()
    assert "YOUR CODE HERE" in text and "__syncthreads" not in text and "LAYOUT_NT" not in text
    assert "STUDENT_ID" in text


# points out of 10, and what the feedback names, of the tampered notebooks and the g1 students
TAMPERED = {"patched": (6, ["correct but racy", "SharedMemoryRaceError"]),
            "deleted": (0, ["OutOfBoundsError"]),
            "own": (10, ["full marks"]),
            "borrowed": (0, ["wrong values"])}


def _rows(course):
    return {(r["student_id"], r["assignment"]): r for r in csv.DictReader((course / "grades.csv").open())}


def test_the_exported_grades_are_the_rubrics(cycle):
    course, _, students, graded = cycle
    rows = _rows(course)
    for assignment, group in (("a2_barriers_boundaries", students), ("g1_rect_tiles", graded)):
        for student, sample in group.items():
            row = rows[(student, assignment)]
            points = TAMPERED[sample][0] if sample in TAMPERED else EXPECTED[sample][0]
            assert float(row["score"]) == points, (sample, row)
            assert float(row["max_score"]) == 10, (sample, row)


def _feedback(course, student, assignment):
    html = (course / "feedback" / student / assignment / f"{assignment}.html").read_text()
    return re.sub(r"<[^>]+>", "", html).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")


def test_each_student_gets_feedback_naming_what_went_wrong(cycle):
    course, _, students, graded = cycle
    for assignment, group in (("a2_barriers_boundaries", students), ("g1_rect_tiles", graded)):
        for student, sample in group.items():
            text = _feedback(course, student, assignment)
            assert "tests run in a sandbox" in text, (sample, text[:2000])
            for needle in (TAMPERED[sample][1] if sample in TAMPERED else EXPECTED[sample][1]):
                assert needle in text, (sample, needle)
    assert "Your variant (student id" in _feedback(course, "2001", "g1_rect_tiles")


def test_autograde_refuses_without_the_sandbox(tmp_path):
    """No bwrap on PATH: the command grades nothing, says why and exits with status 2."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "source").symlink_to(ROOT / "assignments" / "source")
    (course / "nbgrader_config.py").write_text((ROOT / "assignments" / "nbgrader_config.py").read_text())
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    out = subprocess.run([sys.executable, "-m", "tiling_course.grading", "autograde", "a2_barriers_boundaries"],
                         cwd=course, env=env, capture_output=True, text=True)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Not grading" in out.stderr and "bubblewrap" in out.stderr


def test_gradescope_check_loads_no_runtime_and_export_names_the_assignments(tmp_path):
    """run_autograder's `check` of results.json starts without the runtime (it runs after every
    submission, and after a grader that crashed); `export` of an id no rubric has names those
    there are, as argparse's choices did."""
    probe = ("import sys; from tiling_course.grading import gradescope; status = gradescope.main(['check']); "
             "sys.exit(status + 10 * any(m.split('.')[0] in ('cudacheck', 'numpy') for m in sys.modules))")
    results = tmp_path / "results"
    results.mkdir()
    for written, status in (({"score": 10.0, "output": "", "tests": [{"score": 1, "max_score": 1}]}, 0),
                            ({"score": float("nan"), "output": "", "tests": []}, 1)):
        (results / "results.json").write_text(json.dumps(written))
        out = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "AUTOGRADER_ROOT": str(tmp_path)},
                             capture_output=True, text=True)
        assert out.returncode == status, out.stderr
    out = subprocess.run([sys.executable, "-m", "tiling_course.grading", "gradescope", "export", "g9_none"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "invalid choice: 'g9_none'" in out.stderr
    assert all(repr(name) in out.stderr for name in rubric.ASSIGNMENTS)
