"""Submissions as data, honest variants, and a grade with its reason for every submission
(issue 41, items 3-5), on both grading paths: the Gradescope contract (run_autograder in
an /autograder laid out under AUTOGRADER_ROOT, one submission at a time, as
tests/course/test_gradescope.py plays it) and an nbgrader batch (`python -m
tiling_course.grading autograde`, two at a time, every case a student of one class).

Two tables of cases, each a row: the upload (files by name; a builder given the
student's own correct answer), the points it must get out of 10, and how the first line
of its part's explanation (the ✓ or ✗ line under the rubric table) must start.

- HONEST: a correct answer as students really write and save it (a byte-order mark, CRLF,
  tabs, blank lines and comments before %%cuda, every option the magic documents, helper
  functions, templates): full marks on both paths.
- ATTACKS: links to the grader's files and to devices, FIFOs, oversized files, malformed
  magic lines and options that cannot be honoured: each costs its own points and nothing
  more, and no file outside the upload reaches the feedback.

To add a case, add a row (the runtime's attacks of items 1-2 belong in ATTACKS, with
`paths=BOTH`)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.gradescope_contract import (
    ASSIGNMENT,
    autograder_env,
    autograder_root,
    metadata,
    run_autograder,
    write_upload,
)
from tiling_course.grading import judge, rubric, variants

pytestmark = pytest.mark.slow
VARIABLE = "rect_src"
HIDDEN = ROOT / "assignments" / "hidden"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
GRADESCOPE, NBGRADER = "gradescope", "nbgrader"
BOTH = (GRADESCOPE, NBGRADER)
FULL = "✓ `matmul_rect` computes the right"
MAGIC = f"%%cuda {VARIABLE}"
LOOP = "        for (int i = 0; i < TILE_K; ++i)\n            sum += As[ty][i] * Bs[i][tx];\n"


@dataclass(frozen=True)
class Kit:
    """What a row builds its upload from: the student's correct answer, their variant, and
    the released notebook."""
    answer: str
    variant: dict
    release: dict

    def notebook(self, cell):
        """The released notebook with its %%cuda cell's text replaced by `cell`."""
        nb = json.loads(json.dumps(self.release))
        for c in nb["cells"]:
            if "".join(c["source"]).startswith(MAGIC):
                c["source"] = cell
        return nb


@dataclass(frozen=True)
class Case:
    name: str
    upload: object          # Kit -> {file name: content} (tests.support.gradescope_contract.write_upload's contents)
    points: float
    first_line: str         # how the first line of the part's explanation starts
    paths: tuple = BOTH
    never_shown: tuple = ()  # files whose text must not be in the feedback


def cell(text):
    """An upload of the released notebook, its %%cuda cell `text(answer)`."""
    return lambda k: {NOTEBOOK: k.notebook(text(k.answer))}


def cu(content):
    """An upload of one rect_src.cu, its bytes `content(answer)`."""
    return lambda k: {f"{VARIABLE}.cu": content(k.answer)}


def link(target):
    return lambda path: path.symlink_to(target)


def fifo(path):
    os.mkfifo(path)


def helpers(answer):
    """The answer with its inner product in a __device__ function, and its tile loads in
    a function template."""
    dot = ("static __device__ float dot(const float (*As)[TILE_K], const float (*Bs)[TILE_N], int ty, int tx) {\n"
           "    float s = 0.0f;\n    for (int i = 0; i < TILE_K; ++i)\n        s += As[ty][i] * Bs[i][tx];\n"
           "    return s;\n}\n\n")
    return answer.replace('extern "C"', dot + 'extern "C"', 1).replace(LOOP, "        sum += dot(As, Bs, ty, tx);\n")


def templated(answer):
    dot = ("template <int K, int N>\n"
           "__device__ float dot(const float (*As)[K], const float (*Bs)[N], int ty, int tx) {\n"
           "    float s = 0.0f;\n#pragma unroll\n    for (int i = 0; i < K; ++i)\n        s += As[ty][i] * Bs[i][tx];\n"
           "    return s;\n}\n\n")
    return answer.replace('extern "C"', dot + 'extern "C"', 1).replace(
        LOOP, "        sum += dot<TILE_K, TILE_N>(As, Bs, ty, tx);\n")


def crlf(text):
    return text.replace("\n", "\r\n")


HONEST = [
    Case("the released notebook, answered", cell(lambda a: f"{MAGIC}\n{a}"), 10, FULL),
    Case("CRLF line ends", cell(lambda a: crlf(f"{MAGIC}\n{a}")), 10, FULL),
    Case("tabs for indentation", cell(lambda a: f"{MAGIC}\n" + a.replace("    ", "\t")), 10, FULL),
    Case("a blank line before %%cuda", cell(lambda a: f"\n{MAGIC}\n{a}"), 10, FULL),
    Case("blank lines and comments before %%cuda", cell(lambda a: f"\n  \n# part 1\n\n{MAGIC}\n{a}"), 10, FULL),
    Case("blank lines and comments before the kernel", cell(
        lambda a: f"{MAGIC}\n\n\n// my answer\n/* tiles of TILE_M x TILE_K */\n\n{a}"), 10, FULL),
    Case("comments in another alphabet", cell(lambda a: f"{MAGIC}\n// Lösung von Zoë — 矩阵乘法\n{a}"), 10, FULL),
    Case("-std=c++17", cell(lambda a: f"{MAGIC} -std=c++17\n{a}"), 10, FULL),
    Case("-arch=sm_90a -std=c++17", cell(lambda a: f"{MAGIC} -arch=sm_90a -std=c++17\n{a}"), 10, FULL),
    Case("-lineinfo -O3 --use_fast_math -fmad=false, tab-separated",
         cell(lambda a: f"{MAGIC}\t-lineinfo -O3\t--use_fast_math -fmad=false\n{a}"), 10, FULL),
    Case("a -D the source needs", cell(lambda a: f"{MAGIC} -DDOT_OF=sum\n" + a.replace(
        "        C[row * n + col] = sum;", "        C[row * n + col] = DOT_OF;")), 10, FULL),
    Case("a -D of a macro the variant sets (the variant's value wins)",
         cell(lambda a: f'{MAGIC} -DTILE_M=2 "-DTILE_K=1"\n{a}'), 10, FULL),
    Case("a kernel split into helper functions", cell(lambda a: f"{MAGIC}\n{helpers(a)}"), 10, FULL),
    Case("a function template", cell(lambda a: f"{MAGIC}\n{templated(a)}"), 10, FULL),
    Case("a notebook saved with a byte-order mark",
         lambda k: {NOTEBOOK: b"\xef\xbb\xbf" + json.dumps(k.notebook(f"{MAGIC}\n{k.answer}")).encode()}, 10, FULL),
    Case("a .cu file with a byte-order mark and CRLF", cu(lambda a: b"\xef\xbb\xbf" + crlf(a).encode()), 10, FULL,
         paths=(GRADESCOPE,)),
    Case("a .cu file that starts with the cell's %%cuda line and options",
         cu(lambda a: f"{MAGIC} -std=c++17\n{a}"), 10, FULL, paths=(GRADESCOPE,)),
    Case("a .cu file in a folder", lambda k: {f"answers/{VARIABLE}.cu": k.answer}, 10, FULL, paths=(GRADESCOPE,)),
]

LINK_REFUSED = "✗ No kernel for `rect_src`: `rect_src.cu` was not read: a symbolic link"
ATTACKS = [
    Case("rect_src.cu linked to the hidden tests", lambda k: {f"{VARIABLE}.cu": link("../source/hidden/tests.toml")},
         0, LINK_REFUSED, paths=(GRADESCOPE,), never_shown=("source/hidden/tests.toml",)),
    Case("rect_src.cu linked to a file of the grading machine", lambda k: {f"{VARIABLE}.cu": link("/etc/passwd")},
         0, LINK_REFUSED, paths=(GRADESCOPE,), never_shown=("/etc/passwd",)),
    Case("a notebook linked to /dev/zero beside a correct answer",
         lambda k: {f"{VARIABLE}.cu": k.answer, "notes.ipynb": link("/dev/zero")}, 10, FULL, paths=(GRADESCOPE,)),
    Case("a FIFO notebook beside a correct answer",
         lambda k: {f"{VARIABLE}.cu": k.answer, "notes.ipynb": fifo}, 10, FULL, paths=(GRADESCOPE,)),
    Case("a linked rect_src.cu beside a notebook that answers", lambda k: {
        NOTEBOOK: k.notebook(f"{MAGIC}\n{k.answer}"), f"{VARIABLE}.cu": link("/etc/passwd")}, 10, FULL,
         paths=(GRADESCOPE,)),
    Case("a folder linked to / beside a correct answer",
         lambda k: {f"{VARIABLE}.cu": k.answer, "root": link("/")}, 10, FULL, paths=(GRADESCOPE,)),
    Case("an oversized rect_src.cu", cu(lambda a: a + "//" + "x" * (17 << 20)), 0,
         "✗ No kernel for `rect_src`: `rect_src.cu` was not read: it is over 16 MiB", paths=(GRADESCOPE,)),
    Case("the notebook linked to /dev/zero", lambda k: {NOTEBOOK: link("/dev/zero")}, 0,
         f"✗ No kernel for `rect_src`: `{NOTEBOOK}` was not read: a symbolic link"),
    Case("the notebook linked to a file of the grading machine", lambda k: {NOTEBOOK: link("/etc/passwd")}, 0,
         f"✗ No kernel for `rect_src`: `{NOTEBOOK}` was not read: a symbolic link", never_shown=("/etc/passwd",)),
    Case("a linked data file beside the answer", lambda k: {
        NOTEBOOK: k.notebook(f"{MAGIC}\n{k.answer}"), "data.txt": link("/dev/zero")}, 10, FULL),
    Case("a notebook that is not JSON", lambda k: {NOTEBOOK: '{"cells": [' + k.answer}, 0,
         f"✗ No kernel for `rect_src`: `{NOTEBOOK}` was not read: it is not a notebook (not JSON"),
    Case("an unclosed quote on the %%cuda line", cell(lambda a: f'{MAGIC} -DX="1\n{a}'), 0,
         "✗ No kernel for `rect_src`: in cell"),
    Case("-I on the %%cuda line", cell(lambda a: f"{MAGIC} -I/etc\n{a}"), 0,
         "✗ `rect_src` was not compiled: its `%%cuda` line has `-I/etc`"),
    Case("an option the runtime does not know", cell(lambda a: f"{MAGIC} -frobnicate\n{a}"), 0,
         "✗ `rect_src` was not compiled: its `%%cuda` line has an option the CPU runtime refuses"),
]
# Issue 41, items 1-2: nothing in the source turns a check off, and device code reaches nothing
# but the runtime. Each planted bug grades the same under every spelling that once hid it.
RACE = "        __shared__ float last; last = tid;   // every thread writes it: a race\n"
PAST = "        if (A[m * k + tid] == 12345.678f && B[k * n + tid] == 1.5f) sum += 1.0f;   // reads past A and B\n"
SHELL = ('        if (tid == 0 && __builtin_fork() == 0) __builtin_execl("/bin/sh", "sh", "-c", "true", (char*)0);\n')
CHECKED = "✗ `matmul_rect` on m = 1, k = 1, n = 1, the CPU runtime in checked mode: "


def planted(line, before="", attribute=""):
    """The answer with `line` put before its inner product, `before` at its top and
    `attribute` on its kernel."""
    def text(answer):
        answer = answer.replace(LOOP, line + LOOP)
        answer = answer.replace('extern "C" __global__', f'extern "C" __global__ {attribute}')
        return f"{MAGIC}\n{before}\n{answer}"
    return cell(text)


PASTED = '#define NOCHECK(x) __attri##bute__((x))\n#define GNU(x) [[gnu::x]]'
CHECKS_KEPT = [
    Case("a racy __shared__ write", planted(RACE), 4, CHECKED + "**SharedMemoryRaceError**"),
    Case("a racy __shared__ write under no_sanitize_thread",
         planted(RACE, attribute="__attribute__((no_sanitize_thread))"), 4, CHECKED + "**SharedMemoryRaceError**"),
    Case("a racy __shared__ write under pasted attributes and pragmas", planted(
        RACE, PASTED + '\n#pragma GCC optimize("O0")\n_Pragma("GCC push_options")',
        'NOCHECK(no_sanitize("thread")) GNU(no_sanitize_thread)'), 4, CHECKED + "**SharedMemoryRaceError**"),
    Case("reads past A and B", planted(PAST), 0, CHECKED + "**OutOfBoundsError**"),
    Case("reads past A and B under no_sanitize(thread, bounds) and a #line",
         planted(PAST, '#line 1 "<launch stubs>"', '__attribute__((no_sanitize("thread", "bounds")))'), 0,
         CHECKED + "**OutOfBoundsError**"),
    Case("a shell through __builtin_fork and __builtin_execl", planted(SHELL), 0, CHECKED + "**CompileError**"),
    Case("a shell through an asm label", planted("        if (tid == 0) run_shell(\"true\");\n",
                                                'extern "C" __device__ int run_shell(const char*) asm("system");'),
         0, CHECKED + "**CompileError**"),
]
CASES = {c.name: c for c in HONEST + ATTACKS + CHECKS_KEPT}


def student(i):
    return f"c{i:02d}"


def kits(release):
    part = rubric.part(ASSIGNMENT, VARIABLE)
    out = {}
    for i, name in enumerate(CASES):
        variant = variants.of(part, student(i))
        out[name] = Kit(judge.solution(HIDDEN, ASSIGNMENT, variant), variant, release)
    return out


def explanation(section):
    """The first line of a part's explanation: its ✓ or ✗ line."""
    return next((line for line in section.splitlines() if line.startswith(("✓", "✗"))), section[:300])


def nbgrader(course, *args):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", *args], cwd=course, env=env, capture_output=True, text=True,
                          timeout=1800)


@pytest.fixture(scope="module")
def course(released_course, tmp_path_factory):
    """An nbgrader course with the graded assignment released, its hidden tests beside it: a
    copy of the session's (its release and gradebook), which this module's batch grades in."""
    course = tmp_path_factory.mktemp("corpora-course") / "course"
    shutil.copytree(released_course, course, symlinks=True)
    return course


@pytest.fixture(scope="module")
def release(course):
    return json.loads((course / "release" / ASSIGNMENT / NOTEBOOK).read_text())


@pytest.fixture(scope="module")
def by_gradescope(autograder, grader_warm_cache, release, tmp_path_factory):
    """{case: (run_autograder's process, results.json, its root)} for every Gradescope case."""
    base, built = tmp_path_factory.mktemp("corpora-gradescope"), kits(release)
    names = [n for n, c in CASES.items() if GRADESCOPE in c.paths]

    def one(name):
        sid = student(list(CASES).index(name))
        root = base / sid / "autograder"
        return name, (*run_autograder(autograder, root, CASES[name].upload(built[name]), metadata(sid),
                                      grader_warm_cache), root)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, names))


@pytest.fixture(scope="module")
def by_nbgrader(course, release, grader_warm_cache):
    """{case: (points in the gradebook, the graded cell's feedback)}, the nbgrader cases
    graded in one batch, two at a time, each as its own student's submission."""
    from nbgrader.api import Gradebook  # (here: a module-level import puts nbgrader in every test process)
    built = kits(release)
    names = [n for n, c in CASES.items() if NBGRADER in c.paths]
    for name in names:
        write_upload(course / "submitted" / student(list(CASES).index(name)) / ASSIGNMENT,
                     CASES[name].upload(built[name]))
    out = nbgrader(course, "tiling_course.grading", "autograde", ASSIGNMENT, "--jobs", "2",
                   f"--warm={grader_warm_cache}")
    graded = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for name in names:
            sid = student(list(CASES).index(name))
            path = course / "autograded" / sid / ASSIGNMENT / NOTEBOOK
            section = ""
            if path.exists():
                cells = json.loads(path.read_text())["cells"]
                shown = ["".join(o.get("data", {}).get("text/markdown", ""))
                         for c in cells for o in c.get("outputs", [])]
                section = next((text for text in shown if f"## `{VARIABLE}`" in text), "")
            graded[name] = (gb.find_submission(ASSIGNMENT, sid).score, section)
    return out, graded


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if GRADESCOPE in c.paths])
def test_gradescope_grades_each_case(by_gradescope, name):
    case = CASES[name]
    out, results, root = by_gradescope[name]
    assert results is not None, (name, out.stderr[-3000:])
    (test,) = results["tests"]
    assert (results["score"], explanation(test["output"])[:len(case.first_line)]) == (case.points, case.first_line), \
        (name, test["output"], results["output"])
    shown = results["output"] + test["output"]
    for path in case.never_shown:
        text = (root / path if not path.startswith("/") else Path(path)).read_text()
        assert not any(line.strip() in shown for line in text.splitlines() if len(line.strip()) > 12), (name, shown)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if NBGRADER in c.paths])
def test_an_nbgrader_batch_grades_each_case(by_nbgrader, name):
    case = CASES[name]
    out, graded = by_nbgrader
    points, section = graded[name]
    assert (points, explanation(section)[:len(case.first_line)]) == (case.points, case.first_line), \
        (name, section, out.stderr[-3000:])
    for path in case.never_shown:
        assert not any(line.strip() in section for line in Path(path).read_text().splitlines()
                       if len(line.strip()) > 12), name


def test_the_nbgrader_batch_graded_every_case(by_nbgrader):
    out, _ = by_nbgrader
    assert out.returncode == 0, out.stderr[-3000:]


def test_a_file_not_read_is_named_with_its_reason(by_gradescope):
    """The summary lists what was not read, and why, beside the grade it did not cost."""
    _, results, _ = by_gradescope["a notebook linked to /dev/zero beside a correct answer"]
    assert "- `notes.ipynb`: a symbolic link, and the grader reads only regular files" in results["output"]
    _, results, _ = by_gradescope["a -D of a macro the variant sets (the variant's value wins)"]
    assert "`-DTILE_M=2` on the `%%cuda` line was left out" in results["tests"][0]["output"]


# ------------------------------------------------------------------ a grade whatever happens

def test_a_grader_killed_mid_run_still_leaves_a_grade_and_its_reason(autograder, grader_warm_cache, release,
                                                                      tmp_path):
    """SIGKILL to the grader while the sandbox runs the submission: run_autograder writes
    results.json itself, a 0 that says the autograder stopped."""
    root = tmp_path / "autograder"
    kit = kits(release)["the released notebook, answered"]
    autograder_root(autograder, root, {f"{VARIABLE}.cu": kit.answer}, metadata(student(0)), grader_warm_cache)
    shell = subprocess.Popen(["bash", str(root / "run_autograder")], cwd=root, env=autograder_env(root),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    grader = None
    while grader is None and time.monotonic() < deadline:   # the grader, once its sandbox has started
        grader = next((pid for pid in children(shell.pid) if children(pid)), None)
        time.sleep(0.05)
    assert grader is not None, "the grader never started its sandbox"
    os.kill(grader, signal.SIGKILL)
    _, err = shell.communicate(timeout=120)
    assert shell.returncode == 128 + signal.SIGKILL, err[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith(f"Not graded: the autograder stopped (exit status {128 + signal.SIGKILL})")


def children(pid):
    """The ids of the processes whose parent is pid."""
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            ppid = next(ln for ln in status.read_text().splitlines() if ln.startswith("PPid:")).split()[1]
        except (OSError, StopIteration):   # it ended while we looked
            continue
        if int(ppid) == pid:
            out.append(int(status.parent.name))
    return out


@pytest.mark.parametrize("broken", ["", "{not json", '{"score": "10", "output": "", "tests": []}'])
def test_a_missing_or_broken_results_json_is_replaced(autograder, grader_warm_cache, tmp_path, broken):
    """A grader that leaves no results.json, or one Gradescope cannot show (here: a
    GRADER_PYTHON stand-in that writes `broken` and exits 0)."""
    root = tmp_path / "autograder"
    autograder_root(autograder, root, {}, metadata(student(0)), grader_warm_cache)
    stand_in = tmp_path / "python"
    stand_in.write_text(f'#!/bin/sh\nif [ "$3 $4" = "gradescope run" ]; then mkdir -p "$AUTOGRADER_ROOT/results"; '
                        f"printf '%s' '{broken}' > \"$AUTOGRADER_ROOT/results/results.json\"; exit 0; fi\n"
                        f'exec {sys.executable} "$@"\n')
    stand_in.chmod(0o755)
    if not broken:
        stand_in.write_text('#!/bin/sh\nif [ "$3 $4" = "gradescope run" ]; then exit 0; fi\n'
                            f'exec {sys.executable} "$@"\n')
    out = subprocess.run(["bash", str(root / "run_autograder")], cwd=root,
                         env={**autograder_env(root), "GRADER_PYTHON": str(stand_in)}, capture_output=True, text=True)
    results = json.loads((root / "results" / "results.json").read_text())
    assert (out.returncode, results["score"]) == (0, 0), out.stderr[-2000:]
    assert results["output"].startswith("Not graded: the autograder stopped (exit status 0)")


def test_a_grader_error_is_a_grade_and_its_reason(autograder, grader_warm_cache, tmp_path, monkeypatch):
    """An exception in the grader itself (here, planted in Judge.grade): results.json says
    the autograder failed, with a score of 0, and the trace goes to the log."""
    from tiling_course.grading import gradescope
    root = tmp_path / "autograder"
    autograder_root(autograder, root, {f"{VARIABLE}.cu": "x"}, metadata(student(0)), grader_warm_cache)

    def fails(*args, **kwargs):
        raise RuntimeError("a bug in the grader")
    monkeypatch.setattr(judge.Judge, "grade", fails)
    assert gradescope.run(root) == 1
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["output"].startswith("Not graded: the autograder failed (RuntimeError)")
    assert gradescope.check(root) == 0
