"""An assignment as a Gradescope autograder, for classes of any size: Gradescope runs each
submission in a container of its own, in parallel, without a GPU, which the CPU runtime
serves.

    python -m tiling_course.grading gradescope export g1_rect_tiles --hidden assignments/hidden --out g1.zip
    python -m tiling_course.grading gradescope run          # what the zip's run_autograder calls, in the container

The zip follows Gradescope's autograder specification: at its root setup.sh (run once, as
root, when Gradescope builds the image: it installs Python, g++, bubblewrap and this
package with its dependencies at the versions the course tested, into /autograder/venv,
and warms the compile cache) and run_autograder (run per submission, in /autograder: it
grades /autograder/submission and writes /autograder/results/results.json). Beside them
the assignment's id, its hidden tests (this assignment's only) and the package's wheel.

A submission is the released notebook, or a `<variable>.cu` file per part
(tiling_course.grading.answers reads either, as text, inside a sandbox that sees the submission
alone: tiling_course.grading.reading). The student id that draws the variant is
the submission's first user's, from /autograder/submission_metadata.json: its "sid" where
Gradescope gives one, else the e-mail address, else Gradescope's user id; the feedback
names the id it used. The submission's CUDA runs in the bubblewrap sandbox
(tiling_course.grading.judge); if the sandbox cannot start in the container, nothing is graded
and results.json says so.

results.json: the total as "score", the summary as "output" (Markdown), and one entry of
"tests" per part: its name, score, max_score, status and its feedback as "output".
AUTOGRADER_ROOT moves /autograder elsewhere (tests/course/test_gradescope.py plays the contract
in a temporary folder, and tests/course/test_gradescope_setup.py runs setup.sh there).

setup.sh runs on Gradescope's Ubuntu base images. The package needs Python 3.11 or newer
(tomllib): Ubuntu 24.04's python3 is 3.12; 22.04's is 3.10, so there setup.sh installs
python3.11 and python3.11-venv from the universe archive. Where it cannot find or install
such a Python (another image), it stops the image's build with a message that says which
image to choose, rather than fail later inside pip.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
import zipfile
from importlib import metadata
from pathlib import Path

# rubric and reading (which bring the runtime, 0.8 s of start-up) are imported where a command
# grades or exports: run_autograder's `check` of results.json needs neither.

SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image from its Ubuntu
# base image (22.04 or 24.04). AUTOGRADER_ROOT moves /autograder elsewhere (the tests run
# this script in a temporary folder).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
export AUTOGRADER_ROOT="${AUTOGRADER_ROOT:-/autograder}"
need="This autograder needs Python 3.11 or newer (its package reads TOML with tomllib), g++ and bubblewrap:
choose Gradescope's Ubuntu 22.04 or 24.04 base image (Configure Autograder, Base Image)."

# Ubuntu 24.04's python3 is 3.12; 22.04's is 3.10, too old, and there python3.11 comes from
# the universe archive. Debian and Ubuntu ship venv's pip apart, as python3.X-venv.
recent_python() {
    local p
    for p in python3.13 python3.12 python3.11 python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            command -v "$p"
            return 0
        fi
    done
    return 1
}
missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v setpriv >/dev/null || missing+=(util-linux)
if python=$(recent_python); then
    "$python" -m ensurepip --version >/dev/null 2>&1 || missing+=("$(basename "$python")-venv")
else
    missing+=(python3.11 python3.11-venv)
fi
if ((${#missing[@]})); then
    echo "setup.sh: installing ${missing[*]} with apt-get"
    if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }; then
        printf 'setup.sh: apt-get could not install %s.\n%s\n' "${missing[*]}" "$need" >&2
        exit 1
    fi
fi
if ! python=$(recent_python) || ! "$python" -m ensurepip --version >/dev/null 2>&1; then
    printf 'setup.sh: no Python 3.11 or newer with venv here (python3 is %s).\n%s\n' \
        "$(python3 -V 2>&1 || echo missing)" "$need" >&2
    exit 1
fi
echo "setup.sh: $("$python" -V) at $python"
"$python" -m venv "$AUTOGRADER_ROOT/venv"
"$AUTOGRADER_ROOT/venv/bin/pip" install -q --upgrade pip
"$AUTOGRADER_ROOT/venv/bin/pip" install -q -r "$AUTOGRADER_ROOT/source/requirements.txt"
"$AUTOGRADER_ROOT/venv/bin/pip" install -q --no-deps "$AUTOGRADER_ROOT"/source/wheel/*.whl
# The compile cache every submission starts from (if the image build allows the sandbox;
# otherwise the first run of each container builds its own).
"$AUTOGRADER_ROOT/venv/bin/python" -m tiling_course.grading gradescope warm || true
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for each submission, in /autograder. Whatever becomes of the grader
# (an error, a kill, no results.json or a broken one), the student gets a results.json
# with a score and the reason.
results="${AUTOGRADER_ROOT:-/autograder}/results"
python="${GRADER_PYTHON:-${AUTOGRADER_ROOT:-/autograder}/venv/bin/python}"
"$python" -m tiling_course.grading gradescope run
status=$?
if ! "$python" -m tiling_course.grading gradescope check; then
    why="Not graded: the autograder stopped (exit status $status) before it wrote your results, so nothing"
    why="$why you submitted was graded. Submit again; if this happens again, tell your instructor."
    mkdir -p "$results"
    cat > "$results/results.json" <<EOF
{"score": 0, "output": "$why", "output_format": "md", "visibility": "visible", "tests": [],
 "extra_data": {"error": "the grader stopped", "status": $status}}
EOF
fi
exit "$status"
"""


def _root():
    return Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))


# What the wheel is built from: the packages' folders, the book's kernels (which setup.py puts
# inside the course package) and the build's configuration.
WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "runtime", "course", "kernels")


def build_wheel(out):
    """The package's wheel, built from the repository this module is imported from."""
    repo = Path(__file__).resolve().parents[3]   # <repo>/course/tiling_course/grading/this file
    if not (repo / "pyproject.toml").exists():
        raise FileNotFoundError("export needs the repository (or --wheel): this tiling_course is an installed copy")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in WHEEL_SOURCES:
            if (repo / name).is_dir():
                shutil.copytree(repo / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            else:
                shutil.copy(repo / name, src / name)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(out), str(src)], check=True)
    return next(Path(out).glob("tiling_course-*.whl"))


def pins():
    """The wheel's dependencies, pinned at the versions of this environment (the ones the
    course's tests ran with), as requirements lines."""
    import re
    lines = []
    for req in metadata.requires("tiling-course") or []:
        if "extra ==" in req:
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0)
        lines.append(f"{name}=={metadata.version(name)}")
    return "\n".join(sorted(lines)) + "\n"


def export(assignment_id, hidden, out, wheel=None):
    """Write the autograder zip of an assignment to `out`; returns its path."""
    from . import rubric
    a = rubric.ASSIGNMENTS[assignment_id]
    tests = {}
    if a.graded:
        with open(Path(hidden) / "tests.toml", "rb") as f:
            tests = {assignment_id: tomllib.load(f)[assignment_id]}
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(wheel) if wheel else build_wheel(tmp)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16
                z.writestr(info, text)
            z.writestr("assignment.json", json.dumps({"assignment": assignment_id}))
            z.writestr("requirements.txt", pins())
            z.writestr("hidden/tests.toml", _toml(tests))
            z.write(wheel, f"wheel/{wheel.name}")
    return out


def _toml(tests):
    """{assignment: {variable: {seed, shapes, trace}}} as TOML."""
    lines = []
    for assignment, parts in tests.items():
        for variable, spec in parts.items():
            lines.append(f"[{assignment}.{variable}]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"


def student_id(metadata_path):
    """(id, who): the id that draws the variant, and how the feedback names it."""
    try:
        users = json.loads(Path(metadata_path).read_text()).get("users") or []
    except (OSError, ValueError):
        users = []
    user = users[0] if users and isinstance(users[0], dict) else {}
    for key in ("sid", "email", "id"):
        if user.get(key):
            return str(user[key]), key
    return "", ""


def results(result, elapsed, sid, key):
    """results.json's object for a graded submission."""
    from . import rubric
    tests = []
    for i, (variable, score) in enumerate(result.scores.items(), 1):
        part = rubric.part(result.assignment, variable)
        tests.append({"name": f"{part.title} (`{variable}`)", "number": str(i), "score": score.points,
                      "max_score": score.out_of, "status": "passed" if score.points == score.out_of else "failed",
                      "output": result.sections[variable], "output_format": "md", "visibility": "visible"})
    summary = result.feedback.split("\n## ")[0]
    if key:
        summary += f"\n\nThe variant was drawn from your {key} as Gradescope gives it (`{sid}`)."
    return {"score": result.points, "execution_time": round(elapsed), "output": summary, "output_format": "md",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"assignment": result.assignment, "student": sid, "variants": {
                k: v for k, v in result.variant.items()}}}


def _results_path(root):
    return root / "results" / "results.json"


def _write(root, obj):
    """results.json, whole or not at all (a grader killed while writing leaves none, and
    run_autograder writes its own)."""
    path = _results_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    os.replace(part, path)


def _not_graded(why, error):
    return {"score": 0, "output": f"Not graded: {why}", "output_format": "md", "visibility": "visible", "tests": [],
            "extra_data": {"error": error}}


def run(root=None):
    """Grade /autograder/submission into /autograder/results/results.json; returns the
    exit status (1 when nothing could be graded). Whatever fails, results.json says so."""
    root = Path(root or _root())
    try:
        return _grade(root, time.monotonic())
    except Exception as e:   # the grader's own fault (a submission's is a Score): say so, and keep the trace
        traceback.print_exc()
        _write(root, _not_graded(f"the autograder failed ({type(e).__name__}) before it had graded your submission. "
                                 "Submit again; if this happens again, tell your instructor.", type(e).__name__))
        return 1


def _grade(root, start):
    from . import reading, rubric
    from .judge import Judge
    from .sandbox import SandboxUnavailable
    assignment_id = json.loads((root / "source" / "assignment.json").read_text())["assignment"]
    a = rubric.ASSIGNMENTS[assignment_id]
    sid, key = student_id(root / "submission_metadata.json")
    try:
        judge = Judge(hidden=root / "source" / "hidden" if a.graded else None, warm=root / "source" / "warm-cache")
    except SandboxUnavailable as e:
        _write(root, _not_graded(f"the autograder could not start its sandbox, and it does not run submissions "
                                 f"without one. Tell your instructor. ({e})", "sandbox unavailable"))
        print(f"sandbox unavailable: {e}", file=sys.stderr)
        return 1
    found = reading.answers(judge.box, root / "submission", a.parts)   # in a sandbox that sees the submission alone
    result = judge.grade(assignment_id, found, sid, unread=found.unread)
    print(found.log, file=sys.stderr)
    print(result.log)
    _write(root, results(result, time.monotonic() - start, sid, key))
    return 0


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check(root=None):
    """0 if results.json is there and follows Gradescope's contract (a finite score, an
    output, a list of tests with theirs), else 1, saying why on standard error
    (run_autograder then writes its own)."""
    path = _results_path(Path(root or _root()))
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        tests = obj["tests"]
        if not (_finite(obj["score"]) and isinstance(obj["output"], str) and isinstance(tests, list)
                and all(_finite(t["score"]) and _finite(t["max_score"]) for t in tests)):
            raise ValueError("a score, an output or a test of the wrong type")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{path}: not a results.json Gradescope can show ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    return 0


def warm(root=None):
    """Build the warm compile cache into source/warm-cache (setup.sh)."""
    from .judge import Judge
    root = Path(root or _root())
    Judge(warm=root / "source" / "warm-cache")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tiling_course.grading gradescope",
                                 description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write an assignment's autograder zip")
    ex.add_argument("assignment", help="the assignment's id (rubric.ASSIGNMENTS)")
    ex.add_argument("--hidden", default="assignments/hidden", help="the hidden tests' folder")
    ex.add_argument("--out", default=None, help="the zip (default: autograder-ASSIGNMENT.zip)")
    ex.add_argument("--wheel", default=None, help="the package's wheel (default: built from this repository)")
    sub.add_parser("run", help="grade the submission in $AUTOGRADER_ROOT (/autograder)")
    sub.add_parser("check", help="exit 0 if $AUTOGRADER_ROOT/results/results.json follows Gradescope's contract")
    sub.add_parser("warm", help="build the warm compile cache in $AUTOGRADER_ROOT/source")
    args = ap.parse_args(argv)
    if args.command == "export":
        from . import rubric
        if args.assignment not in rubric.ASSIGNMENTS:
            ap.error(f"argument assignment: invalid choice: {args.assignment!r} "
                     f"(choose from {', '.join(map(repr, sorted(rubric.ASSIGNMENTS)))})")
        out = export(args.assignment, args.hidden, args.out or f"autograder-{args.assignment}.zip", args.wheel)
        print(f"wrote {out}: upload it as the assignment's autograder (Gradescope: Configure Autograder, zip file)")
        return 0
    return {"run": run, "check": check, "warm": warm}[args.command]()

