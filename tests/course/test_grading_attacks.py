"""The adversarial grading corpus: what a student could try on the grader, each with the
grade and the feedback it must get, and the side effects it must not have.

Three kinds of attack:

- through the student's Python (a cell that patches tiling_course.grading, reads the
  solutions, calls os._exit, edits the graded cell): the grader never runs that Python,
  so they change nothing; their cells would write a marker file on the grader's machine;
- through the CUDA, the one thing the grader runs: kernels calling the C library, host
  code meant to run when the kernel's library loads (the CPU runtime, like NVRTC, refuses
  both at compile time), kernels that hang, flood their output or crash;
- as native code that got past those checks would: an "escaped" runner, a program run in
  the real sandbox in place of tiling_course.grading.launcher, that runs shell commands, writes
  outside the scratch folder, reads the grader's files and /proc, opens a connection,
  takes memory, forks without end, sleeps, exits, aborts, crashes, floods its output or
  the results channel, or forges results. The sandbox must contain each, and the grade
  must be 0 with its reason, or, where the escaped code only looked around and then ran
  the real runner, the grade the CUDA earns.

What an attack could reach is checked from outside (marker files, the warm cache
unchanged, a listening socket); what it could see it prints into the run's log, which the
test reads (the student's feedback never shows the log). The corpus is graded once,
several submissions at a time, as a class would be."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import GRADING_SAMPLES, ROOT
from tiling_course.grading import answers, judge, launcher, rubric, sandbox, variants

SAMPLES = GRADING_SAMPLES
CORRECT = (SAMPLES / "correct.cu").read_text()
WRONG = CORRECT.replace("P[row * n + col] = sum;", "P[row * n + col] = 0.0f;")
A2, BOUNDS = "a2_barriers_boundaries", "bounds_src"
HIDDEN = ROOT / "assignments" / "hidden"


def notebook(base, kernel=None, python=(), graded_cell=None, extra_cells=()):
    """The released notebook with its %%cuda cell set to `kernel` (None: the starter left),
    Python cells added after it, the graded cell and its points replaced, extra cells at the end."""
    nb = json.loads(json.dumps(base))
    cells = []
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if kernel is not None and text.startswith(f"%%cuda {BOUNDS}"):
            cell["source"] = f"%%cuda {BOUNDS}\n{kernel}"
        if graded_cell is not None and text.startswith("from tiling_course.grading import selfcheck"):
            cell["source"] = graded_cell
            cell["metadata"]["nbgrader"]["points"] = 1000
        cells.append(cell)
        if text.startswith(f"%%cuda {BOUNDS}"):
            cells += [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": p}
                      for p in python]
    nb["cells"] = cells + list(extra_cells)
    return nb


def host(body):
    """CUDA source with host code meant to run when the kernel's library loads."""
    return ('extern "C" int system(const char*); extern "C" int fork(void);\n'
            "static int attack = [] {\n" + body + "\n    return 0;\n}();\n" + CORRECT)


def escaped(body, then_grade=False):
    """An escaped runner: Python run in the sandbox in place of tiling_course.grading.launcher, doing
    `body` (with os, sys, socket, ctypes imported), then, if then_grade, the real runner."""
    tail = f"\nos.execv(sys.executable, [sys.executable, *{launcher.COMMAND[1:]!r}])\n" if then_grade else ""
    return ("import os, sys, socket, ctypes, glob\n" + body + tail, )


def corpus(outside, base, port):
    """{attack: (submission, points, what the feedback must say, what the log must not say)}.
    A submission is a notebook (dict), CUDA (str), or an escaped runner (a 1-tuple: its
    code) that runs beside the correct kernel."""
    mark = lambda name: str(outside / name)   # noqa: E731  (a file the attack tries to make on the grader's machine)
    grader_files = [HIDDEN / "tests.toml", ROOT / "assignments" / "source" / A2 / f"{A2}.ipynb", ROOT / "Makefile",
                    ROOT / "course" / "tiling_course" / "exercises" / "02_tiling.toml", outside / "secret.txt"]
    forged = (json.dumps({"part": BOUNDS, "run": "0", "mode": "checked", "error": None,
                          "outputs": {"P": {"dtype": "<f4", "shape": [1, 1], "data": "AAAAAA=="}}}) + "\n"
              + json.dumps({"done": True}) + "\n")
    return {
        # ---- the student's Python: never run
        "python cell patches award": (
            notebook(base, None, [f"import tiling_course.grading.selfcheck as g\ng.award = lambda *a, **k: 10.0\n"
                                  f"open({mark('patched')!r}, 'w')"], graded_cell="10.0"),
            0, ["wrong values"], []),
        "python cell reads the solutions": (
            notebook(base, CORRECT.replace("#ifndef", f'#include "{HIDDEN}/solutions/g1_rect_tiles.cu"\n#ifndef', 1),
                     ["import glob\nfor f in glob.glob('../../../source/*/*.ipynb'): print(open(f).read())\n"
                      f"open({mark('read')!r}, 'w')"]),
            0, ["UnsupportedFeatureError", "includes a header"], []),
        "python cell calls os._exit(1)": (
            notebook(base, CORRECT, [f"open({mark('exited')!r}, 'w')\nimport os\nos._exit(1)"]),
            10, ["full marks"], []),
        "graded cell and its points edited, a right kernel in a markdown cell": (
            notebook(base, WRONG, graded_cell="10.0", extra_cells=[
                {"cell_type": "markdown", "metadata": {}, "source": f"%%cuda {BOUNDS}\n{CORRECT}"}]),
            0, ["wrong values", "elements of P differ"], []),
        "the last %%cuda cell counts": (
            notebook(base, CORRECT, extra_cells=[{"cell_type": "code", "metadata": {}, "outputs": [],
                                                  "execution_count": None, "source": f"%%cuda {BOUNDS}\n{WRONG}"}]),
            0, ["wrong values"], []),
        # ---- the CUDA
        "kernel calls system()": (
            'extern "C" __device__ int system(const char*);\n' + CORRECT.replace(
                "float sum = 0.0f;", f'float sum = 0.0f;\n    system("touch {mark("system")}");', 1),
            0, ["does not compile", "system"], []),
        "kernel calls exit()": (
            'extern "C" __device__ void exit(int);\n'
            + CORRECT.replace("float sum = 0.0f;", "float sum = 0.0f; exit(0);"),
            0, ["does not compile", "exit"], []),
        "host code runs a shell command": (host(f'    system("touch {mark("shell")}");'),
                                           0, ["does not compile", "system"], []),
        "host code forks without end": (host("    for (;;) fork();"), 0, ["does not compile", "fork"], []),
        "kernel writes through a wild pointer": (
            CORRECT.replace("float sum = 0.0f;", "float sum = 0.0f;\n    *(volatile float*) 64 = 1.0f;", 1),
            0, ["0 / 10"], []),
        "kernel floods its output": (
            CORRECT.replace("float sum = 0.0f;", 'float sum = 0.0f;\n    for (int i = 0; i < 200; ++i) '
                            'printf("flooding the output of the grader, line %d of thread %d\\n", i, tx);', 1),
            0, ["could not finish", "printed more than"], []),
        "kernel time bomb": (
            CORRECT.replace("float sum = 0.0f;", "float sum = 0.0f;\n    while (m == 1) { }", 1),
            0, ["does not finish", "KernelTimeoutError", "time limit of 2 s"], []),
        "an over-long source": ("//" + "x" * 70000 + "\n" + CORRECT, 0, ["no kernel", "over 64 KiB"], []),
        # ---- native code past the runtime's checks: an escaped runner, in the real sandbox
        "escaped: runs shell commands and writes outside the scratch folder": (escaped(
            f"os.system('touch {mark('shell')}; echo SHELL RAN >&2')\n"
            "for p in ['/job/pwned', '/grader/site/pwned', '/warm/pwned', '/usr/pwned', '/etc/pwned', "
            f"{mark('written')!r}, '/scratch/fine']:\n"
            "    try:\n        open(p, 'w').write('x'); print('WROTE', p, file=sys.stderr)\n"
            "    except OSError:\n        pass\n", then_grade=True), 10, ["full marks"], ["WROTE /job", "WROTE /grader",
                                                                                   "WROTE /warm", "WROTE /usr",
                                                                                   "WROTE /etc", "WROTE /tmp"]),
        "escaped: reads the grader's files": (escaped(
            f"for p in {[str(f) for f in grader_files]!r}:\n"
            "    if os.path.exists(p): print('READ', p, file=sys.stderr)\n"
            "print('PROBED', file=sys.stderr)\n", then_grade=True), 10, ["full marks"], ["READ"]),
        "escaped: reads the grader's /proc": (escaped(
            "for d in glob.glob('/proc/[0-9]*'):\n"
            "    try:\n        print('SAW', open(d + '/cmdline').read().replace(chr(0), ' '), file=sys.stderr)\n"
            "    except OSError:\n        pass\n"
            "print('PROBED', file=sys.stderr)\n", then_grade=True), 10, ["full marks"], ["pytest", "test_grading"]),
        "escaped: opens a connection": (escaped(
            "try:\n    socket.create_connection(('127.0.0.1', %d), timeout=2); print('CONNECTED', file=sys.stderr)\n"
            "except OSError as e:\n    print('PROBED', e, file=sys.stderr)\n" % port, then_grade=True),
            10, ["full marks"], ["CONNECTED"]),
        "escaped: takes all the memory it can": (escaped(
            "held = []\ntry:\n    for i in range(16):\n        held.append(bytearray(1 << 29))\n"
            "except MemoryError:\n    pass\nprint('GOT', len(held), 'HALF-GIBS', file=sys.stderr)\ndel held\n",
            then_grade=True), 10, ["full marks"], ["GOT 16 "]),
        "escaped: forges the results": (escaped(
            f"os.write(1, {forged.encode()!r})\n"), 0, ["wrong values"], []),
        "escaped: exits": (escaped("os._exit(3)\n"), 0, ["could not finish", "exited with status 3"], []),
        "escaped: aborts": (escaped("os.abort()\n"), 0, ["could not finish", "SIGABRT"], []),
        "escaped: crashes": (escaped("ctypes.string_at(0)\n"), 0, ["could not finish", "SIGSEGV"], []),
        "escaped: floods its output": (escaped("while True:\n    os.write(2, b'x' * 65536)\n"),
                                       0, ["could not finish", "printed more than"], []),
        "escaped: floods the results": (escaped("while True:\n    os.write(1, b'x' * 65536)\n"),
                                        0, ["could not finish", "MiB of results"], []),
        "escaped: sleeps (a time bomb)": (escaped("import time\ntime.sleep(100000)\n"),
                                          0, ["could not finish", "did not finish within"], []),
        "escaped: forks without end": (escaped(
            "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
            0, ["could not finish", "did not finish within"], []),
    }


class EscapedBox:
    """The real sandbox, running an escaped runner's code (job/escaped.py) in place of
    tiling_course.grading.launcher."""

    def __init__(self, box, code):
        self.box, self.code, self.name, self.limits = box, code, box.name, box.limits

    def run(self, argv, job=None, warm=None, limits=None, warm_writable=False):
        (Path(job) / "escaped.py").write_text(self.code)
        return self.box.run(["python", "/job/escaped.py"], job=job, warm=warm, limits=limits)


@pytest.fixture(scope="module")
def graded(grader_warm_cache, released, tmp_path_factory):
    """The whole corpus graded, four at a time, and what it left on the grader's machine."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("the grader's secret")
    base = released(A2)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    connections = []

    def accept():
        while True:
            try:
                connections.append(listener.accept())
            except TimeoutError:
                continue
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    attacks = corpus(outside, base, listener.getsockname()[1])
    box = sandbox.Bubblewrap(sandbox.Limits(wall=10))
    grader = judge.Judge(hidden=HIDDEN, box=box, warm=grader_warm_cache)
    before = sorted(str(p) for p in Path(grader_warm_cache).rglob("*"))

    def grade(item):
        name, (submission, *_) = item
        if isinstance(submission, dict):
            found = answers.from_notebook(submission, rubric.ASSIGNMENTS[A2].parts, name=f"{A2}.ipynb")
            return name, grader.grade(A2, found, "attacker")
        if isinstance(submission, tuple):
            own = judge.Judge(hidden=HIDDEN, box=EscapedBox(box, submission[0]), warm=grader_warm_cache)
            return name, own.grade(A2, {BOUNDS: CORRECT}, "attacker")
        return name, grader.grade(A2, {BOUNDS: answers.Answer(BOUNDS, submission, f"{BOUNDS}.cu")}, "attacker")

    with ThreadPoolExecutor(4) as pool:
        results = dict(pool.map(grade, attacks.items()))
    after_bombs = grader.grade(A2, {BOUNDS: CORRECT}, "next student")
    listener.close()
    return dict(attacks=attacks, results=results, outside=outside, connections=connections, after=after_bombs,
                cache=(before, sorted(str(p) for p in Path(grader_warm_cache).rglob("*"))))


CASES = list(corpus(Path("/x"), {"cells": []}, 1))


@pytest.mark.parametrize("attack", CASES)
def test_each_attack_gets_its_grade_and_feedback(graded, attack):
    _, points, needles, unseen = graded["attacks"][attack]
    result = graded["results"][attack]
    assert result.points == points, (attack, result.feedback, result.log[-3000:])
    assert result.out_of == 10
    for needle in needles:
        assert needle in result.feedback, (attack, needle, result.feedback)
    for word in unseen:
        assert word not in result.log, (attack, word, result.log[-3000:])


def test_the_escaped_probes_ran_and_found_nothing(graded):
    """The probes ran (they print PROBED, and the shell command its line), so their silence
    about what they looked for means they did not find it."""
    results = graded["results"]
    for attack in ("escaped: reads the grader's files", "escaped: reads the grader's /proc",
                   "escaped: opens a connection"):
        assert "PROBED" in results[attack].log, attack
    assert "SAW" in results["escaped: reads the grader's /proc"].log   # its own processes, and no others
    shell = results["escaped: runs shell commands and writes outside the scratch folder"].log
    assert "SHELL RAN" in shell and "WROTE /scratch/fine" in shell
    got = results["escaped: takes all the memory it can"].log.split("GOT ")[1].split()[0]
    assert int(got) * 512 <= sandbox.Limits().memory >> 20
    assert not graded["connections"], "a submission reached the grader's machine over the network"


def test_nothing_reached_the_graders_machine(graded):
    """No marker file outside the sandbox, the warm cache as it was, no solution text in
    any feedback."""
    assert sorted(p.name for p in graded["outside"].iterdir()) == ["secret.txt"]
    before, after = graded["cache"]
    assert before == after
    solution = (HIDDEN / "solutions" / "g1_rect_tiles.cu").read_text()
    secret_lines = [line.strip() for line in solution.splitlines() if len(line.strip()) > 30]
    for attack, result in graded["results"].items():
        assert "the grader's secret" not in result.feedback + result.log, attack
        for line in secret_lines:
            assert line not in result.feedback, (attack, line)


def test_grading_goes_on_after_the_bombs(graded):
    assert graded["after"].points == 10, graded["after"].feedback


def test_no_feedback_shows_the_runs_log(graded):
    """What a submission prints reaches the instructor's log, never the student's feedback
    (it could print the hidden tests' inputs)."""
    result = graded["results"]["escaped: runs shell commands and writes outside the scratch folder"]
    assert "SHELL RAN" in result.log and "SHELL RAN" not in result.feedback


# ------------------------------------------------------------- graded assignments

def test_an_answer_passed_around_earns_its_receiver_nothing(grader_warm_cache):
    """The g1 solution for one student's variant, submitted under another's id whose
    layout differs, computes the wrong product; the feedback names the receiver's variant."""
    part = rubric.part("g1_rect_tiles", "rect_src")
    giver = variants.of(part, "student-a")
    receiver_id = next(f"student-{i}" for i in range(100)
                       if variants.of(part, f"student-{i}")["layout"] != giver["layout"])
    receiver = variants.of(part, receiver_id)
    grader = judge.Judge(hidden=HIDDEN, warm=grader_warm_cache)
    source = judge.solution(HIDDEN, "g1_rect_tiles", giver)
    assert grader.grade("g1_rect_tiles", {"rect_src": source}, "student-a").points == 10
    result = grader.grade("g1_rect_tiles", {"rect_src": source}, receiver_id)
    assert result.points == 0 and "wrong values" in result.feedback, result.feedback
    assert f"`{receiver_id}`" in result.feedback and f"TILE_M = {receiver['TILE_M']}" in result.feedback


def test_the_books_kernels_earn_nothing_on_a_graded_assignment(grader_warm_cache):
    """The book's kernels, as they are or renamed to the graded function, are no answer."""
    from tiling_course import matmul
    grader = judge.Judge(hidden=HIDDEN, warm=grader_warm_cache)
    for source, sid in ((matmul.source("tiled_bounds"), "s1"),
                        (matmul.source("tiled_bounds").replace("matmul_tiled_bounds", "matmul_rect"), "s2")):
        result = grader.grade("g1_rect_tiles", {"rect_src": source}, sid)
        assert result.points == 0, (sid, result.feedback)


# ------------------------------------------------------------------- the sandbox's users

def sandbox_users_processes():
    """{uid: [pid, ...]} for every sandbox user (sandbox.UIDS) that owns a process now."""
    owned = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uid = int(next(ln for ln in status.read_text().splitlines() if ln.startswith("Uid:")).split()[1])
        except (OSError, StopIteration):
            continue
        if uid in sandbox.UIDS:
            owned.setdefault(uid, []).append(int(status.parent.name))
    return owned


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="a sandbox user of its own per run is what the sandbox does as root")


@needs_root
def test_a_fork_bombs_processes_are_gone_when_its_run_returns(grader_warm_cache):
    """Killing bwrap only starts the PID namespace's tear-down; a bomb's processes count
    against the next run's RLIMIT_NPROC until reaped (that run then cannot start: setpriv's
    status 126). The run returns once they are gone, and the next run starts, every time."""
    box = sandbox.Bubblewrap(sandbox.Limits(wall=2))
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    for attempt in range(4):
        assert box.run(["python", "-c", bomb]).timed_out
        assert not sandbox_users_processes(), attempt
        after = box.run(["python", "-c", "print('started')"])
        assert (after.exit_code, after.result) == (0, b"started\n"), (attempt, after.output)


@needs_root
def test_a_sandbox_user_that_still_owns_a_process_is_passed_over(grader_warm_cache):
    """Processes left under a sandbox user (here three started by hand, as a run's could be)
    count against RLIMIT_NPROC: a run given that user with a limit of two processes could not
    start. The sandbox passes such a user over and leaves the processes alone."""
    leftovers = [subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "60"])
                 for uid in sandbox.UIDS[:4] for _ in range(3)]
    try:
        deadline = time.monotonic() + 10
        while sum(map(len, sandbox_users_processes().values())) < 12 and time.monotonic() < deadline:
            time.sleep(0.01)
        out = sandbox.Bubblewrap(sandbox.Limits(wall=20, processes=2)).run(["python", "-c", "print('started')"])
        assert (out.exit_code, out.result) == (0, b"started\n"), out.output
        assert all(p.poll() is None for p in leftovers)
    finally:
        for p in leftovers:
            p.kill()
            p.wait()


# ------------------------------------------------------------------- no sandbox

def test_without_bubblewrap_the_grader_refuses_to_grade(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install -y bubblewrap"):
        judge.Judge()


def test_when_bubblewrap_cannot_start_the_grader_refuses_to_grade(monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{Path(sys.executable).parent}:/usr/bin:/bin")
    with pytest.raises(sandbox.SandboxUnavailable, match="No permissions to create new namespace"):
        judge.Judge()
