"""The book's exercises (course/tiling_course/exercises.py): every solution passes its checker, every
known wrong answer is rejected with the failure it should give, every starter fails
(so no exercise comes solved), the checker never raises, and the chapters' exercise
cells (exercises.authoring, which scripts/sync_notebooks.py writes into the notebooks)
have the expected form.

Fresh random inputs on every run, as the book's checker uses. The kernels are compiled
once, up front, on every core (compiling is most of the time), then checked in order."""
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import cudacheck
from tiling_course import exercises, matmul, tryout
from cudacheck.errors import KernelError

ROOT = Path(__file__).resolve().parent.parent
ALL = list(exercises.EXERCISES.values())
KERNEL_EXERCISES = [e for e in ALL if e.kind != "value"]
VALUE_EXERCISES = [e for e in ALL if e.kind == "value"]
CHAPTER_STEMS = ["01_naive", "02_tiling", "03_syncthreads", "04_boundaries", "05_performance"]


def _sources(ex):
    yield exercises.solution(ex.id)
    yield exercises.starter(ex.id)
    for _, src in exercises.wrong_answers(ex.id):
        yield src


@pytest.fixture(scope="session", autouse=True)
def compiled():
    """Build every source the tests check, for checked mode, in parallel: the checks
    then find them in the compile cache (and in tryout's, for this process)."""
    jobs = {(src, ex.launch.name, ex.launch.options(tile, src))
            for ex in KERNEL_EXERCISES for src in _sources(ex) for tile in ex.tiles}

    def build(job):
        try:
            tryout._function(*job, "cpu", True)
        except (KernelError, KeyError):
            pass   # the wrong answers that do not compile fail again, in their test

    workers = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(build, sorted(jobs)))


def _answer(ex, code):
    """Run a value exercise's Python code; the value it sets."""
    namespace = {}
    exec(compile(code, f"<{ex.id}>", "exec"), namespace)
    return namespace[ex.var]


@pytest.mark.parametrize("ex", ALL, ids=lambda e: e.id)
def test_solution_passes(ex):
    answer = _answer(ex, exercises.solution(ex.id)) if ex.kind == "value" else exercises.solution(ex.id)
    result = exercises.check(ex.id, answer, quiet=True)
    assert result, result.message
    assert result.kind == "pass" and result.message.startswith("✓")


WRONG = [pytest.param(ex, w, src, id=f"{ex.id}:{w.name}") for ex in ALL for w, src in exercises.wrong_answers(ex.id)]


@pytest.mark.parametrize("ex,wrong,source", WRONG)
def test_wrong_answer_is_rejected(ex, wrong, source):
    result = exercises.check(ex.id, source, quiet=True)
    assert not result, f"{wrong.name} ({wrong.what}) passed"
    assert result.kind == wrong.expect, result.message
    assert ex.hint in result.message
    if wrong.expect == "wrong values":
        d = result.details
        assert {"row", "col", "expected", "got", "thread", "block"} <= set(d)
        assert f"P[{d['row']}][{d['col']}]" in result.message and str(d["thread"]) in result.message
        assert result.shape is not None
    elif ex.kind != "value" and wrong.expect != "requirement":
        assert type(result.error).__name__ == wrong.expect
        assert str(result.error).splitlines()[0] in result.message


@pytest.mark.parametrize("ex", ALL, ids=lambda e: e.id)
def test_starter_fails(ex):
    answer = _answer(ex, exercises.starter(ex.id)) if ex.kind == "value" else exercises.starter(ex.id)
    result = exercises.check(ex.id, answer, quiet=True)
    assert not result, f"the starter of {ex.id} already passes"
    assert result.kind == ex.starter_fails, result.message


def test_fix_starters_are_edits_of_the_solution():
    for ex in ALL:
        if ex.kind == "fix":
            assert isinstance(ex.starter, exercises.Edit) and ex.starter.base == ex.solution, ex.id
            assert exercises.starter(ex.id) != exercises.solution(ex.id)


def test_every_chapter_has_at_least_three_exercises_mostly_kernels():
    for stem in CHAPTER_STEMS:
        assert len(exercises.chapter(stem)) >= 3, stem
        assert (ROOT / "book" / f"{stem}.ipynb").exists()
    assert len(KERNEL_EXERCISES) > 2 * len(VALUE_EXERCISES)
    assert len({e.id for e in ALL}) == len(ALL)
    for ex in ALL:
        assert ex.kind in ("write", "fix", "value") and ex.title and ex.statement and ex.hint, ex.id
        assert ex.wrong, f"{ex.id} lists no wrong answer"
        if ex.kind == "value":
            assert ex.answer is not None and ex.launch is None
        else:
            assert ex.launch is not None and ex.shapes and ex.tiles


def test_kernel_exercises_try_awkward_shapes():
    """Every kernel exercise tries several shapes; those whose kernel takes any shape try
    1 x 1, a size that is no multiple of the tile, and m != k != n."""
    for ex in KERNEL_EXERCISES:
        assert len(ex.shapes) >= 2, ex.id
        if matmul.KERNELS[ex.launch.kernel].shapes == "any":
            assert (1, 1, 1) in ex.shapes, ex.id
            assert any(m != k != n != m for m, k, n in ex.shapes), ex.id
            assert any(any(d % t for d in s) for s in ex.shapes for t in ex.tiles), ex.id


@pytest.mark.parametrize("source", [None, "", 42, "this is not CUDA",
                                    'extern "C" __global__ void other(float* x) { x[0] = 1.0f; }',
                                    'extern "C" __global__ void matmul_naive(float* P) { P[0] = 1.0f; }',
                                    'extern "C" __global__ void matmul_naive(const float* M, const float* N, '
                                    'float* P, int Width) { while (true) {} }'])
def test_check_never_raises_for_a_wrong_kernel(source, monkeypatch):
    monkeypatch.setattr(cudacheck.config, "time_limit", 1.0)
    result = exercises.check("naive-1", source, quiet=True)
    assert not result and result.message.startswith("**Exercise naive-1")
    assert "**Hint:**" in result.message


def test_check_of_an_unknown_exercise_or_a_bad_value():
    assert not exercises.check("naive-99", "x", quiet=True)
    for value in (None, "a lot", True, float("nan"), [1]):
        result = exercises.check("naive-4", value, quiet=True)
        assert not result and result.kind in ("no answer", "not a number", "wrong value"), value


def test_value_answers_come_from_real_runs():
    for ex in VALUE_EXERCISES:
        expected = ex.answer()
        assert math.isfinite(expected) and expected > 0
        assert exercises.check(ex.id, expected, quiet=True)


def test_a_failure_names_the_coarsened_thread():
    """A kernel whose thread computes two elements is blamed on the right thread."""
    ex = exercises.EXERCISES["perf-2"]
    result = exercises.check(ex.id, exercises.starter(ex.id), quiet=True)
    d = result.details
    assert d["block"][0] == d["col"] // 32 and d["thread"][0] == d["col"] % 32 % 16


def test_show_solution_prints_a_code_block(capsys):
    exercises.show_solution("naive-1")
    exercises.show_solution("perf-3")
    out = capsys.readouterr().out
    assert "```cuda\n" + exercises.solution("naive-1").rstrip() + "\n```" in out
    assert "```python\n" in out


def test_result_shows_once_in_a_notebook_cell(monkeypatch, capsys):
    """check() displays its result; as the value of the same cell it is not shown again,
    but it is when shown from a later cell."""
    monkeypatch.setattr(exercises, "_execution_count", lambda: 7)
    result = exercises.check("naive-4", 1)
    assert capsys.readouterr().out.count("not yet") == 1
    result._ipython_display_()
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(exercises, "_execution_count", lambda: 8)
    result._ipython_display_()
    assert "not yet" in capsys.readouterr().out


@pytest.mark.parametrize("stem", CHAPTER_STEMS)
def test_chapter_cells_parse(stem):
    """The authoring format: Markdown cells split by +++, code cells fenced, an optional
    :tags: line first; per exercise a heading, the starter, the check, the solution."""
    cells = _parse(exercises.authoring(stem))
    assert cells[0] == ("markdown", [], cells[0][2]) and cells[0][2].startswith("## Exercises")
    assert cells[1] == ("code", [], "from tiling_course import exercises")
    rest = cells[2:]
    assert len(rest) == 4 * len(exercises.chapter(stem))
    for i, ex in enumerate(exercises.chapter(stem)):
        md, start, chk, sol = rest[4 * i:4 * i + 4]
        assert md[0] == "markdown" and md[2].startswith(f"### Exercise {i + 1}: {ex.title}")
        assert start[0] == "code" and (start[2].startswith(f"%%cuda {ex.var}\n") or ex.kind == "value")
        assert chk == ("code", [], f'exercises.check("{ex.id}", {ex.var})')
        assert sol == ("code", ["hide-cell"], f'exercises.show_solution("{ex.id}")')


def _parse(text):
    cells, markdown, lines, i = [], [], text.split("\n"), 0

    def flush():
        if "\n".join(markdown).strip():
            cells.append(("markdown", [], "\n".join(markdown).strip("\n")))
        markdown.clear()

    while i < len(lines):
        if lines[i] == "```{code-cell} ipython3":
            flush()
            i += 1
            tags = []
            if lines[i].startswith(":tags:"):
                tags = [t.strip() for t in lines[i].split("[", 1)[1].rstrip("]").split(",")]
                i += 1
            body = []
            while lines[i] != "```":
                body.append(lines[i])
                i += 1
            cells.append(("code", tags, "\n".join(body)))
        elif lines[i] == "+++":
            flush()
        else:
            markdown.append(lines[i])
        i += 1
    flush()
    return cells
