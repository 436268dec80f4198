"""How fast does a class get graded, and what does the sandbox cost? 100 different
submissions of a2_barriers_boundaries graded by tiling_course.grading.judge twice in one run: each
submission in its bubblewrap sandbox (how the grader always grades), and, beside it, the
same runner with the same limits on CPU, memory and file size but no sandbox (what the
grader never does; here only to measure the sandbox), in rounds that alternate the two so
that both meet the same load. Each prints the throughput in submissions per minute per
core, and the CPU seconds its runs used (each runner reports its own and its processes').
--nbgrader also times the instructor's whole nbgrader workflow (generate_assignment,
zip_collect, the sandboxed autograde, export) on the same submissions.

The submissions are sources that all differ (their own names and comments): correct
kernels in several styles, kernels that are correct but racy (checked mode finds it; 6 of
10 points), racy kernels that compute the wrong product, kernels out of bounds, a few that
hang (each stopped by the rubric's time limit) and some that do not compile. Every grade
and feedback is checked against what its kind must get; the script exits 1 if any is
wrong. Each configuration starts from its warm compile cache (built first, not timed: the
runtime's objects and precompiled headers), and compiles every submission afresh.

    python benchmarks/grading.py                   # sandbox beside no sandbox, --jobs one per core
    python benchmarks/grading.py --jobs 2 --nbgrader
"""
import argparse
import csv
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "support" / "grading_samples"
ASSIGNMENT = "a2_barriers_boundaries"
VARIABLE = "bounds_src"

CORRECT = (SAMPLES / "correct.cu").read_text()
_LOOP = "for (int i = 0; i < TILE_WIDTH; ++i)\n            sum += Mds[ty][i] * Nds[i][tx];"
_GUARD = "    if (row < m && col < n)\n        P[row * n + col] = sum;"


def _styles():
    """Correct kernels written differently (each still the tiled product for any shape)."""
    return [
        CORRECT,
        CORRECT.replace(_LOOP, "#pragma unroll\n        " + _LOOP),
        CORRECT.replace(_LOOP, "for (int i = 0; i < TILE_WIDTH; i++) {\n            sum = sum + Mds[ty][i] * "
                        "Nds[i][tx];\n        }"),
        CORRECT.replace("    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;",
                        "    int num_tiles = k / TILE_WIDTH + (k % TILE_WIDTH != 0);"),
        CORRECT.replace(_GUARD, "    if (row >= m || col >= n) return;\n    P[row * n + col] = sum;"),
        CORRECT.replace("float sum = 0.0f;", "float sum = 0;"),
        CORRECT.replace("Mds", "tileM").replace("Nds", "tileN"),
    ]


# kind: (how many of 100, points it must score, what its feedback must name)
KINDS = {
    "correct": (64, 10, "full marks"),
    "correct but racy": (6, 6, "SharedMemoryRaceError"),
    "racy": (8, 0, "SharedMemoryRaceError"),
    "out of bounds": (10, 0, "OutOfBoundsError"),
    "hangs": (4, 0, "KernelTimeoutError"),
    "does not compile": (8, 0, "CompileError"),
}


def _variant(kind, i):
    """Submission i of a kind: a source no other submission has."""
    if kind == "correct":
        src = _styles()[i % 7]
    elif kind == "correct but racy":   # every thread writes one shared word; the product is right
        src = CORRECT.replace(_GUARD, "    __shared__ float last;\n    last = sum;\n" + _GUARD)
    elif kind == "racy":
        src = [(SAMPLES / "racy.cu").read_text(),   # no barrier after the phase's products
               CORRECT.replace("        __syncthreads();\n        for", "        for", 1)][i % 2]
    elif kind == "out of bounds":
        src = [(SAMPLES / "out_of_bounds.cu").read_text(),   # M loaded without its guard
               CORRECT.replace("(nrow < k && col < n) ? N[nrow * n + col] : 0.0f", "N[nrow * n + col]"),
               CORRECT.replace(_GUARD, "    P[row * n + col] = sum;")][i % 3]
    elif kind == "hangs":
        src = (SAMPLES / "hangs.cu").read_text()
    else:
        src = [(SAMPLES / "does_not_compile.cu").read_text(),   # a missing semicolon
               CORRECT.replace("int tx = threadIdx.x", "int tx = threadIdx.u"),
               CORRECT.replace("__syncthreads();", "__syncthread();", 1),
               CORRECT.replace("float sum", "flaot sum")][i % 4]
    return src.replace("sum", f"acc{i}") + f"\n// submission {i}\n"


def submissions():
    """[(student id, kind, source)]: 100 sources, all different, kinds interleaved."""
    queue = [kind for kind, (count, _, _) in KINDS.items() for _ in range(count)]
    # interleave: spread each kind over the class, as a real download would be
    order = sorted(range(len(queue)), key=lambda j: ((j * 37) % len(queue)))
    subs = [(str(3000 + n), queue[j], _variant(queue[j], n)) for n, j in enumerate(order)]
    assert len({s for _, _, s in subs}) == len(subs), "every submission must differ"
    return subs


def grade_all(grader, subs, jobs):
    """{student: Result} of every submission, `jobs` at a time; (results, wall s, CPU s: the
    runs' own, as each runner reports it, and this process's)."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        results = dict(pool.map(lambda s: (s[0], grader.grade(ASSIGNMENT, {VARIABLE: s[2]}, s[0])), subs))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    own = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return results, wall, own + sum(r.cpu for r in results.values())


def wrong_grades(subs, points_of, feedback_of):
    """What is wrong: a grade that is not its kind's, or feedback that does not name its finding."""
    wrong = []
    for student, kind, _ in subs:
        points, needle = KINDS[kind][1], KINDS[kind][2]
        got = points_of(student)
        if got != points:
            wrong.append(f"{student} ({kind}): {got}, should be {points}")
        elif needle not in feedback_of(student):
            wrong.append(f"{student} ({kind}): its feedback does not name {needle}")
    return wrong


def nbgrader(course, *args, env):
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                         text=True)
    if out.returncode:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return out


def timed(cmd, course, env):
    """Run cmd; (wall s, CPU s of it and every process it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{(out.stdout + out.stderr)[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def nbgrader_cycle(subs, jobs, warm, work):
    """The instructor's workflow on the submissions, the autograde sandboxed; (wall, CPU,
    what is wrong)."""
    course = work / "course"
    course.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    (course / "source").symlink_to(ROOT / "assignments" / "source")
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
    nbgrader(course, "generate_assignment", ASSIGNMENT, env=env)
    release = json.loads((course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    for student, _, src in subs:
        nb = json.loads(json.dumps(release))
        cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith(f"%%cuda {VARIABLE}"))
        cell["source"] = f"%%cuda {VARIABLE}\n{src}".splitlines(keepends=True)
        (archive / f"Student {student}_{student}_assignsubmission_file_{ASSIGNMENT}.ipynb").write_text(json.dumps(nb))
    steps = [[sys.executable, "-m", "nbgrader", "zip_collect", ASSIGNMENT],
             [sys.executable, "-m", "tiling_course.grading", "autograde", ASSIGNMENT, "--jobs", str(jobs), "--warm",
              str(warm)],
             [sys.executable, "-m", "nbgrader", "export"]]
    wall = cpu = 0.0
    for cmd in steps:
        w, c = timed(cmd, course, env)
        wall, cpu = wall + w, cpu + c
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}

    def feedback_of(student):
        nb = json.loads((course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
        return "\n".join("".join(o.get("data", {}).get("text/markdown", "")) for c in nb["cells"]
                         for o in c.get("outputs", []))
    wrong = wrong_grades(subs, lambda s: float(rows[s]["score"]) if s in rows else None, feedback_of)
    return wall, cpu, wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="submissions graded at once (default: one per core)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="rounds in which the two configurations alternate (default 4)")
    ap.add_argument("--nbgrader", action="store_true",
                    help="also time the whole nbgrader workflow, its autograde sandboxed")
    a = ap.parse_args()

    from cudacheck import compiler_version
    from tiling_course.grading import judge, sandbox
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    bwrap = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"grading benchmark: {platform.machine()}, {cores} cores, Python {platform.python_version()}, "
          f"{compiler_version(os.environ.get('CXX', 'g++'))}, {bwrap}, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"load average {load:.2f} at the start")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    subs = submissions()
    print(f"{len(subs)} submissions of {ASSIGNMENT}: "
          + ", ".join(f"{count} {kind}" for kind, (count, _, _) in KINDS.items()) + f"; {a.jobs} at a time")
    work = Path(tempfile.mkdtemp(prefix="grading-bench-"))
    failed = False
    try:
        boxes = {"sandbox": sandbox.Bubblewrap(), "no sandbox": sandbox.Unsandboxed()}
        graders = {name: judge.Judge(box=box, warm=work / f"warm-{i}") for i, (name, box) in enumerate(boxes.items())}
        # In rounds, the two alternating, so that both meet the same load on a shared machine.
        wall, cpu, results = dict.fromkeys(graders, 0.0), dict.fromkeys(graders, 0.0), {name: {} for name in graders}
        for r in range(a.rounds):
            chunk = subs[r::a.rounds]
            for name in (list(graders) if r % 2 == 0 else list(graders)[::-1]):
                got, w, c = grade_all(graders[name], chunk, a.jobs)
                results[name].update(got)
                wall[name] += w
                cpu[name] += c
        used = min(a.jobs, cores)
        for name in graders:
            wrong = wrong_grades(subs, lambda s, r=results[name]: r[s].points, lambda s, r=results[name]: r[s].feedback)
            rate = len(subs) / wall[name] * 60 / used
            print(f"  {name:10}  {wall[name]:6.1f} s wall, {cpu[name]:6.1f} s CPU in the runs "
                  f"({cpu[name] / len(subs):.2f} s a submission): {rate:5.1f} submissions per minute per core"
                  + (f"; WRONG: {len(wrong)}" if wrong else "; every grade and feedback right"))
            if wrong:
                failed = True
                print("    " + "\n    ".join(wrong[:20]))
        extra = (wall["sandbox"] - wall["no sandbox"]) / len(subs) * used
        print(f"the sandbox: {wall['sandbox'] / wall['no sandbox'] - 1:+.0%} wall time ({extra:+.2f} s of a core per "
              f"submission); load average {os.getloadavg()[0]:.2f} at the end")
        if a.nbgrader:
            w, c, wrong = nbgrader_cycle(subs, a.jobs, work / "warm-0", work)
            print(f"  nbgrader workflow (zip_collect, sandboxed autograde, export): {w:.1f} s wall, {c:.1f} s "
                  f"CPU: {len(subs) / w * 60 / used:.1f} submissions per minute per core"
                  + (f"; WRONG: {len(wrong)}" if wrong else "; every exported grade and feedback right"))
            failed |= bool(wrong)
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
