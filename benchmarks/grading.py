"""How fast does a class get graded? 100 different submissions of a graded assignment
(target: under a minute on 2 cores), through the instructor's real workflow in a
temporary nbgrader course: generate_assignment, the submissions written as an LMS
download names them, zip_collect, autograde, export. The compile cache starts empty
(every submission is a new source, as in a real class).

The submissions are the released notebook with its %%cuda cell filled in, each source
different (its own names and comments): correct kernels in several styles, kernels that
are correct but racy (checked mode finds it; 6 of 10 points), racy kernels that compute
the wrong product, kernels out of bounds, a few that hang (each stopped by the rubric's
time limit) and some that do not compile. The exported grades are checked against what
each kind must score, and each autograded notebook's feedback against the finding it
must name; the script exits 1 if any is wrong.

    python benchmarks/grading.py                       # autograde with the course's wrapper (tiling_course.autograde)
    python benchmarks/grading.py --nbgrader            # plain `nbgrader autograde` (one process)
    python benchmarks/grading.py --fresh-kernels          # each kernel started from scratch, as nbgrader does
    python benchmarks/grading.py --jobs 2 --keep
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
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "grading_samples"
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


def nbgrader(course, *args, env):
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                         text=True)
    if out.returncode:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return out


def timed(label, cmd, course, env, log):
    """Run cmd; (wall s, CPU s of it and every process it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log[label] = out.stdout + out.stderr
    if out.returncode:
        sys.exit(f"{label} failed:\n{(out.stdout + out.stderr)[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def feedback_text(course, student):
    nb = json.loads((course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    texts = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            texts.append("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", "")))
    return "\n".join(texts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2 * len(os.sched_getaffinity(0)),
                    help="submissions the wrapper autogrades at once (its default: two per core)")
    ap.add_argument("--fresh-kernels", action="store_true",
                    help="the wrapper starts each kernel from scratch instead of forking it from a warm process")
    ap.add_argument("--nbgrader", action="store_true", help="plain `nbgrader autograde` instead of the wrapper")
    ap.add_argument("--keep", action="store_true", help="keep the temporary course (its path is printed)")
    a = ap.parse_args()

    bindir = str(Path(sys.executable).parent)
    work = Path(tempfile.mkdtemp(prefix="grading-bench-"))
    course = work / "course"
    course.mkdir()
    # nbgrader runs alembic and starts kernels: this environment's bin/ goes first on PATH.
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "CUDACHECK_CACHE_DIR": str(work / "cache")}
    from cudacheck.cpu.compiler import compiler_version
    print(f"grading benchmark: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{compiler_version(os.environ.get('CXX', 'g++'))}, {time.strftime('%Y-%m-%d')}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    try:
        (course / "source").symlink_to(ROOT / "assignments" / "source")
        shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
        nbgrader(course, "generate_assignment", ASSIGNMENT, env=env)
        release = json.loads((course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
        archive = course / "downloaded" / ASSIGNMENT / "archive"
        archive.mkdir(parents=True)
        subs = submissions()
        for student, _, src in subs:
            nb = json.loads(json.dumps(release))
            cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith(f"%%cuda {VARIABLE}"))
            cell["source"] = f"%%cuda {VARIABLE}\n{src}".splitlines(keepends=True)
            (archive / f"Student {student}_{student}_assignsubmission_file_{ASSIGNMENT}.ipynb").write_text(
                json.dumps(nb))
        print(f"{len(subs)} submissions of {ASSIGNMENT}: "
              + ", ".join(f"{count} {kind}" for kind, (count, _, _) in KINDS.items()))

        log, times = {}, {}
        nbg = [sys.executable, "-m", "nbgrader"]
        times["zip_collect"] = timed("zip_collect", [*nbg, "zip_collect", ASSIGNMENT], course, env, log)
        if a.nbgrader:
            cmd = [*nbg, "autograde", ASSIGNMENT]
        else:
            cmd = [sys.executable, "-m", "tiling_course.grading", "autograde", ASSIGNMENT, "--jobs", str(a.jobs),
                   *(["--fresh-kernels"] if a.fresh_kernels else [])]
        times["autograde"] = timed("autograde", cmd, course, env, log)
        times["export"] = timed("export", [*nbg, "export"], course, env, log)
        print(f"autograde: {' '.join(Path(cmd[0]).name if i == 0 else c for i, c in enumerate(cmd))}")
        for step, (wall, cpu) in times.items():
            print(f"  {step:12} {wall:7.1f} s wall, {cpu:7.1f} s CPU")
        wall = sum(t[0] for t in times.values())
        cpu = sum(t[1] for t in times.values())
        print(f"  {'total':12} {wall:7.1f} s wall, {cpu:7.1f} s CPU ({len(subs) / wall:.2f} submissions/s)")

        rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}
        wrong = []
        for student, kind, _ in subs:
            row = rows.get(student)
            points, needle = KINDS[kind][1], KINDS[kind][2]
            if row is None or float(row["score"]) != points or float(row["max_score"]) != 10:
                wrong.append(f"{student} ({kind}): exported {row and row['score']}, should be {points}")
            elif needle not in feedback_text(course, student):
                wrong.append(f"{student} ({kind}): its feedback does not name {needle}")
        dist = Counter((kind, float(rows[s]["score"])) for s, kind, _ in subs if s in rows)
        print("grades exported: " + ", ".join(f"{n} x {score:g}/10 ({kind})" for (kind, score), n in dist.items()))
        if wrong:
            print(f"WRONG: {len(wrong)} of {len(subs)}:\n  " + "\n  ".join(wrong[:20]))
            return 1
        print(f"all {len(subs)} exported grades and feedbacks are right")
        return 0
    finally:
        if a.keep:
            print(f"course kept in {course}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
