"""The course tests' fixtures: the grader's sandbox and its warm compile cache, and an
assignment's Gradescope autograder zip."""
import shutil
import subprocess

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
