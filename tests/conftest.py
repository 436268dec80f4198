from pathlib import Path

import numpy as np
import pytest

import cudacheck

ROOT = Path(__file__).resolve().parent.parent
UNIT_ROUNDOFF = 2.0 ** -24  # float32


@pytest.fixture
def rng():
    """Fresh random inputs on every run; the seed is printed when a test fails."""
    seed = np.random.SeedSequence().entropy
    print(f"random seed: {seed}")
    return np.random.default_rng(seed)


def random_matrix(rng, rows, cols):
    return rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.float32)


def assert_product(P, M, N):
    """P must equal M @ N computed in float64, within the rounding error bound of a
    float32 dot product of length k: |P - MN| <= 2 k u (|M| |N|) elementwise
    (u = 2^-24; the factor 2 covers fused and unfused multiply-adds alike)."""
    P = np.asarray(P, dtype=np.float64)
    M64, N64 = M.astype(np.float64), N.astype(np.float64)
    k = M.shape[1]
    ref = M64 @ N64
    bound = 2 * k * UNIT_ROUNDOFF * (np.abs(M64) @ np.abs(N64)) + 1e-30
    err = np.abs(P - ref)
    bad = np.argwhere(err > bound)
    assert bad.size == 0, (f"{len(bad)} elements differ from NumPy beyond the float32 bound, first at "
                           f"{tuple(bad[0])}: got {P[tuple(bad[0])]}, expected {ref[tuple(bad[0])]}")


# The markers (registered in pyproject.toml). `gpu`: the test needs CuPy and a CUDA GPU, or
# with gpu(nvcc=True) nvcc and an NVIDIA GPU, and skips where they are missing; `pytest -m gpu`
# runs these alone, `-m "not gpu"` the rest. `browser`: it drives a headless Chromium. `slow`:
# it builds the site, the grader's sandbox, a wheel or an edition (minutes); a test that uses
# the fixture building the site or the sandbox is marked so here, the others in their files.
gpu = pytest.mark.gpu
SLOW_FIXTURES = {"built_site", "grader_warm_cache"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        mark = item.get_closest_marker("gpu")
        if mark is not None and mark.kwargs.get("nvcc"):
            from cudacheck.program import gpu_present
            if not gpu_present():
                item.add_marker(pytest.mark.skip(reason="needs nvcc and an NVIDIA GPU"))
        elif mark is not None and not cudacheck.gpu_available():
            item.add_marker(pytest.mark.skip(reason="needs CuPy and a CUDA GPU"))
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class BuiltSite:
    """One Jupyter Book build of the repository (see the ``built_site`` fixture)."""

    def __init__(self, returncode, stdout, stderr, path_output):
        self.returncode = returncode      # of `jupyter-book build`
        self.stdout, self.stderr = stdout, stderr
        self.path_output = path_output    # the --path-output folder
        self.html = path_output / "_build" / "html"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site built once per test session, as `make book` builds it (warnings as errors,
    every notebook executed), into a temporary --path-output; shared by tests/site/test_site.py
    and tests/site/test_browser.py, and deleted at the end of the session. Never fails by
    itself: tests look at ``returncode``, ``stdout`` and ``stderr``."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("site")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(root), "--path-output", str(out), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, timeout=1200)
    yield BuiltSite(proc.returncode, proc.stdout, proc.stderr, out)
    shutil.rmtree(out / "_build", ignore_errors=True)


@pytest.fixture(scope="session")
def grader_warm_cache(tmp_path_factory):
    """The grader's sandbox installed (scripts/install_sandbox.sh, as root with apt-get) and
    a warm compile cache for tiling_course.judge.Judge(warm=...), made once per session.
    Skips where bubblewrap cannot be installed, with the script's reason."""
    import shutil
    import subprocess

    if not all(shutil.which(tool) for tool in ("bwrap", "prlimit", "setpriv")):
        proc = subprocess.run(["sh", str(ROOT / "scripts" / "install_sandbox.sh")], capture_output=True, text=True,
                              timeout=900)
        if proc.returncode == 3:
            pytest.skip(f"no sandbox for the grader: {proc.stderr.strip()}")
        if proc.returncode != 0:
            pytest.fail("scripts/install_sandbox.sh failed:\n" + (proc.stdout + proc.stderr)[-3000:])
    from tiling_course import judge
    warm = tmp_path_factory.mktemp("grader-warm")
    judge.Judge(warm=warm)    # builds it (and fails here, with the reason, if the sandbox cannot start)
    return warm
