"""The site tests' fixtures: one build of the book, one build of the lecture decks, and one
headless Chromium."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.browser import CHROMIUM_FLAGS, start_chromium


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
    out = tmp_path_factory.mktemp("site")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, timeout=1200)
    yield BuiltSite(proc.returncode, proc.stdout, proc.stderr, out)
    shutil.rmtree(out / "_build", ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium (fresh profile) for the whole session."""
    yield from start_chromium(CHROMIUM_FLAGS)


@pytest.fixture(scope="session")
def built_decks(tmp_path_factory):
    """The lecture decks built once per test session, as `make slides` writes them (from `make
    book`'s executed notebooks where there are some, else from the committed ones): shared by
    tests/site/test_slides.py and tests/site/test_slides_browser.py. (folder, the decks built)."""
    import build_slides  # scripts/ is on pytest's path (pyproject.toml)
    folder = tmp_path_factory.mktemp("decks")
    executed = ROOT / "_build" / "jupyter_execute"
    return folder, build_slides.build(folder, executed if (executed / "book").is_dir() else folder / "none")
