import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import colab_install_check as colab_check  # scripts/: the steps of installing the book as a student does
import numpy as np
import pytest

import cudacheck
from tests.support import ROOT

# A kernel's launch may take several times its usual wall time here: two test workers share the
# cores (pyproject.toml's -n 2), and a machine may be busy besides. The limit is a safety net
# against a kernel that never ends, not a measurement; the tests of the limit set their own.
cudacheck.config.time_limit = 60.0
# One worker process per launch: the two test workers keep both cores busy already, and each
# launch's workers are forked from a test process of up to 1.6 GB, at 20-40 ms a fork on this
# kind of machine (logs/2026-12-07-suite-time-3.md). The tests whose verdicts must not depend on
# the count take the `workers` fixture below and run with 1 and 2; the chapters (nbval) keep the
# default, one per core.
cudacheck.config.workers = 1

@pytest.fixture
def rng():
    """Fresh random inputs on every run; the seed is printed when a test fails."""
    seed = np.random.SeedSequence().entropy
    print(f"random seed: {seed}")
    return np.random.default_rng(seed)


# Checked mode's verdicts must not depend on how many workers share a launch's blocks: a test
# that takes this runs with 1 and with 2 (cudacheck.config.workers).
@pytest.fixture(params=[1, 2], ids=["1 worker", "2 workers"])
def workers(request):
    before = cudacheck.config.workers
    cudacheck.config.workers = request.param
    yield request.param
    cudacheck.config.workers = before


# The markers (registered in pyproject.toml). `gpu`: the test needs CuPy and a CUDA GPU, or
# with gpu(nvcc=True) nvcc and an NVIDIA GPU, and skips where they are missing; `pytest -m gpu`
# runs these alone, `-m "not gpu"` the rest. `browser`: it drives a headless Chromium. `slow`:
# it builds the site, the lecture decks, the grader's sandbox, a wheel or an edition (minutes);
# a test that uses a fixture building the site, the decks, the sandbox, the wheel or the Colab
# environment is marked so here, the others in their files.
SLOW_FIXTURES = {"built_site", "built_decks", "grader_warm_cache", "wheel", "colab_install"}


# Parallel workers (pytest-xdist; pyproject.toml asks for `-n 2 --dist loadgroup`): every test
# runs in the worker that runs the rest of its file, so a module fixture is built once and a
# notebook's cells share one kernel; and the tests of a session fixture that builds something
# large run in one worker, so it is built once: the site, the Colab environment (one
# .venv-colab, which two workers must not install into at once), the grader's sandbox and
# what is graded in it (tests/course/conftest.py's autograder, the Gradescope export, which
# holds a wheel, and released_course, the nbgrader releases), the lecture decks.
SHARED_BUILDS = {"built_site": "site", "colab_install": "colab", "grader_warm_cache": "grader",
                 "autograder": "grader", "released_course": "grader", "built_decks": "decks"}
# Files that ask for one of them at run time (request.getfixturevalue), which fixturenames do
# not show: without this, the site was built a second time in the other worker.
ASKS_AT_RUN_TIME = {"tests/site/test_widgets_browser.py": "built_site"}


def _xdist_group(item):
    file = item.nodeid.split("::")[0]
    names = set(getattr(item, "fixturenames", ())) | {ASKS_AT_RUN_TIME.get(file)}
    return next((group for fixture, group in SHARED_BUILDS.items() if fixture in names), file)


@pytest.hookimpl(tryfirst=True)   # before xdist's own, which reads the groups
def pytest_collection_modifyitems(config, items):
    if getattr(config.option, "loadgroup", False):   # set in xdist's workers, which collect
        for item in items:
            item.add_marker(pytest.mark.xdist_group(_xdist_group(item)))
        # The groups that build those things take longest: handed out first, they do not end
        # the run alone on one worker. Then the larger groups before the smaller, so that the
        # small ones fill the end. xdist keeps this order (pyproject.toml's --no-loadscope-reorder).
        groups = {item: _xdist_group(item) for item in items}
        sizes = Counter(groups.values())
        items.sort(key=lambda item: (groups[item] not in SHARED_BUILDS.values(), -sizes[groups[item]]))
    for item in items:
        mark = item.get_closest_marker("gpu")
        if mark is not None and mark.kwargs.get("nvcc"):
            if cudacheck.nvcc_path() is None or not cudacheck.gpu_available():
                item.add_marker(pytest.mark.skip(reason="needs nvcc and an NVIDIA GPU"))
        elif mark is not None and not cudacheck.gpu_available():
            item.add_marker(pytest.mark.skip(reason="needs CuPy and a CUDA GPU"))
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The repository's wheel (scripts/colab_install_check.py's build_wheel), built once per
    session; shared by tests/site/test_wheel.py and the fixture ``colab_install``."""
    return colab_check.build_wheel(tmp_path_factory.mktemp("wheel"))


class ColabInstall(NamedTuple):
    python: Path          # .venv-colab's python, the session's wheel installed
    planned: frozenset    # what pip said it would install for the wheel, asked before installing it


# pip's words when it cannot get a distribution: no index reachable, or none for this Python.
_PIP_CANNOT_GET = ("No matching distribution found", "Could not find a version that satisfies",
                   "Failed to establish a new connection", "Temporary failure in name resolution")


def _what_the_machine_lacks(python, *requirements):
    """Why `requirements` cannot be installed into `python`'s environment, when the reason is
    the machine's: no pip there (this Python makes no virtual environment with pip), or pip
    reaches no distribution (see _PIP_CANNOT_GET), by a dry run; None otherwise."""
    if not Path(python).exists() or subprocess.run([str(python), "-m", "pip", "--version"],
                                                   capture_output=True).returncode != 0:
        return (f"{sys.executable} -m venv made no environment with pip (Debian and Ubuntu: "
                f"apt install python3-venv)")
    proc = subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "-q", *map(str, requirements)],
                          capture_output=True, text=True, timeout=600)
    reasons = [line.strip() for line in (proc.stdout + proc.stderr).splitlines()
               if any(words in line for words in _PIP_CANNOT_GET)]
    return "; ".join(reasons) if proc.returncode != 0 and reasons else None


@pytest.fixture(scope="session")
def colab_install(wheel, tmp_path_factory):
    """.venv-colab, the virtual environment with Google Colab's versions (requirements-colab.txt;
    colab_install_check.colab_venv makes it, again only when that file changes), with the
    session's wheel installed into it as the chapters' set-up cell installs it, once per
    session: what the book adds to Colab's packages (libclang and pyelftools, which the CPU
    runtime needs, and jupyterquiz) comes with the wheel. Skips only where the machine cannot make it (no pip in
    a new virtual environment, or pip reaches no distribution of Colab's pins or of the
    wheel's requirements), with the reason; any other failure is an error."""
    venv = ROOT / ".venv-colab"
    try:
        python = colab_check.colab_venv(venv)
    except subprocess.CalledProcessError:
        lacks = _what_the_machine_lacks(venv / "bin" / "python", "-r", ROOT / "requirements-colab.txt")
        if lacks:
            pytest.skip(f"cannot make .venv-colab with Colab's versions: {lacks}")
        raise
    try:
        planned = colab_check.planned_installs(python, wheel, tmp_path_factory.mktemp("colab"))
        colab_check.install(python, wheel)
    except subprocess.CalledProcessError:
        lacks = _what_the_machine_lacks(python, wheel)
        if lacks:
            pytest.skip(f"cannot install the wheel and its requirements into .venv-colab: {lacks}")
        raise
    return ColabInstall(python, frozenset(planned))
