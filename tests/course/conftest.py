"""The course tests' fixtures: the grader's sandbox and its warm compile cache, an
assignment's Gradescope autograder zip, and an nbgrader course with the assignments the
grader's tests grade released."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.gradescope_contract import ASSIGNMENT
from tiling_course.grading import gradescope


@pytest.fixture(scope="session")
def grader_warm_cache(tmp_path_factory):
    """The grader's sandbox installed (scripts/install_sandbox.sh, as root with apt-get) and
    a warm compile cache for tiling_course.grading.judge.Judge(warm=...), made once per session.
    Skips where bubblewrap cannot be installed, with the script's reason."""
    if not all(shutil.which(tool) for tool in ("bwrap", "prlimit", "setpriv")):
        proc = subprocess.run(["sh", str(ROOT / "scripts" / "install_sandbox.sh")], capture_output=True, text=True,
                              timeout=900)
        if proc.returncode == 3:
            pytest.skip(f"no sandbox for the grader: {proc.stderr.strip()}")
        if proc.returncode != 0:
            pytest.fail("scripts/install_sandbox.sh failed:\n" + (proc.stdout + proc.stderr)[-3000:])
    from tiling_course.grading import judge
    warm = tmp_path_factory.mktemp("grader-warm")
    judge.Judge(warm=warm)    # builds it (and fails here, with the reason, if the sandbox cannot start)
    return warm


@pytest.fixture(scope="session")
def autograder(tmp_path_factory):
    """The Gradescope autograder zip of ASSIGNMENT, exported once per session (it holds a
    wheel, a build of several seconds): the modules that grade through it only read it, and
    every test that takes it runs in the grader's worker (tests/conftest.py's SHARED_BUILDS)."""
    out = tmp_path_factory.mktemp("export")
    return gradescope.export(ASSIGNMENT, ROOT / "assignments" / "hidden", out / "autograder.zip")


# The assignments released_course releases: the graded one, and a2, which the attacks on the
# grader submit to.
RELEASED = (ASSIGNMENT, "a2_barriers_boundaries")


@pytest.fixture(scope="session")
def released_course(tmp_path_factory):
    """An nbgrader course (the repository's assignment sources and hidden tests, its
    nbgrader_config.py) with RELEASED released by nbgrader generate_assignment (seconds of
    CPU each), once per session in the grader's worker (tests/conftest.py's SHARED_BUILDS):
    a module grades in its own copy of it (shutil.copytree with symlinks=True) or reads a
    release through `released`."""
    course = tmp_path_factory.mktemp("released-course")
    (course / "source").symlink_to(ROOT / "assignments" / "source")
    (course / "hidden").symlink_to(ROOT / "assignments" / "hidden")
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for assignment in RELEASED:
        out = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment], cwd=course,
                             env=env, capture_output=True, text=True, timeout=1800)
        assert out.returncode == 0, out.stderr[-3000:]
    return course


@pytest.fixture(scope="session")
def released(released_course):
    """released(assignment): the notebook of one of RELEASED as students get it (a fresh
    copy on every call, the session's release left as nbgrader wrote it)."""
    return lambda assignment: json.loads((released_course / "release" / assignment / f"{assignment}.ipynb").read_text())
