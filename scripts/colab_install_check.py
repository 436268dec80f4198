"""The book installed the way a student installs it: build the repository's wheel (both
packages, cudacheck and tiling_course), install it into a virtual environment that holds
Google Colab's versions (requirements-colab.txt) as the chapters' set-up cell does, copy
the chapter notebooks into an empty folder and run every one under nbval, recording each
cell's outputs.

    python scripts/colab_install_check.py [--venv .venv-colab] [--work DIR]

tests/site/test_wheel.py runs the same steps and checks what they produced; run by hand, the
script prints a summary and exits non-zero if a chapter failed or a plot lost its data.
"""
import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
# What the wheel is built from (tiling_course.grading.gradescope builds it from the same), and where
# each folder of the repository lands in it: the two packages, and the book's kernels
# inside the course package (setup.py).
WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "runtime", "course", "kernels")
SHIPPED = {"runtime/cudacheck": "cudacheck", "course/tiling_course": "tiling_course",
           "kernels": "tiling_course/kernels"}
# What installing the book into Colab may add: itself and what Colab lacks (pyelftools: the
# CPU runtime reads each kernel's object with it).
MAY_INSTALL = {"tiling-course", "libclang", "pyelftools", "jupyterquiz"}
# The chapters' figures that show reference measurements: each must hold data.
DATA_FIGURES = ("perfplots.speedup_plot(", "perfplots.roofline(", "perfplots.ladder_plot(")
RECORDER = '''
"""pytest plugin: after each nbval cell, append its source and outputs to $NBVAL_RECORD."""
import json, os

def pytest_runtest_teardown(item):
    outputs = getattr(item, "test_outputs", None)
    if outputs is None:
        return
    kept = []
    for out in outputs:
        data = out.get("data", {})
        kept.append({"type": out.get("output_type"), "mime": sorted(data),
                     "text": str(data.get("text/plain", "")) + str(data.get("text/markdown", ""))
                             + str(out.get("text", ""))})
    with open(os.environ["NBVAL_RECORD"], "a") as f:
        f.write(json.dumps({"notebook": item.fspath.basename, "source": item.cell.source, "outputs": kept}) + "\\n")
'''


def run(cmd, **kw):
    print("$", " ".join(map(str, cmd)), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def build_wheel(out):
    """The repository's wheel, built from a copy of what it is made of (so that no stale
    build/ or egg-info folder fills a gap); returns its path."""
    src = Path(out) / "src"
    src.mkdir(parents=True)
    for name in WHEEL_SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        kw = {"ignore": shutil.ignore_patterns("__pycache__", "*.egg-info")} if copy is shutil.copytree else {}
        copy(ROOT / name, src / name, **kw)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", Path(out) / "dist",
         src])
    return next((Path(out) / "dist").glob("tiling_course-*.whl"))


# The instructor edition's exercise data (solutions): in the repository, never in the wheel.
INSTRUCTOR_ONLY = ("tiling_course/exercises/*.toml", "tiling_course/exercises/cu/*")


def instructor_only(name):
    # PurePath.match, not fnmatch: a * must not reach into exercises/student/.
    return any(PurePosixPath(name).match(pattern) for pattern in INSTRUCTOR_ONLY)


def missing_from(wheel, folder):
    """The files of `folder` of the repository (a key of SHIPPED) that the wheel does not hold
    where SHIPPED says, less the instructor's."""
    names = set(zipfile.ZipFile(wheel).namelist())
    src = ROOT / folder
    return [name for p in sorted(src.rglob("*")) if p.is_file() and "__pycache__" not in p.parts
            for name in [f"{SHIPPED[folder]}/{p.relative_to(src).as_posix()}"]
            if name not in names and not instructor_only(name)]


def colab_venv(path):
    """A virtual environment with Colab's versions, made once per requirements-colab.txt."""
    path = Path(path)
    stamp = path / ".colab-requirements"
    want = hashlib.sha256((ROOT / "requirements-colab.txt").read_bytes()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == want):
        shutil.rmtree(path, ignore_errors=True)
        run([sys.executable, "-m", "venv", path])
        run([path / "bin" / "python", "-m", "pip", "install", "-q", "-r", ROOT / "requirements-colab.txt"])
        stamp.write_text(want)
    return path / "bin" / "python"


def planned_installs(python, wheel, work):
    """The distributions pip would install for the book's wheel (a dry run)."""
    report = Path(work) / "pip-report.json"
    run([python, "-m", "pip", "install", "-q", "--dry-run", "--report", report, wheel])
    return {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}


def install(python, wheel):
    run([python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel])
    run([python, "-m", "pip", "install", "-q", wheel])   # and what it needs that Colab lacks


def run_chapters(python, work, cache=None):
    """Every chapter under nbval from a folder holding only the notebooks; returns (pytest's
    completed process, the recorded cells). `cache`: the compile cache folder the chapters'
    kernels use; by default a fresh one in `work`, a student's first run. A cache shared
    with the checkout's runs skips only what cannot differ here: its keys hold the installed
    runtime's sources and the libclang version, so a file the wheel lacks or another
    libclang reads everything again."""
    work = Path(work)
    notebooks, plugin, record = work / "notebooks", work / "plugin", work / "cells.jsonl"
    for d in (notebooks, plugin):
        d.mkdir(parents=True, exist_ok=True)
    for nb in sorted((ROOT / "book").glob("*.ipynb")):
        shutil.copy(nb, notebooks)
    (plugin / "nbval_record.py").write_text(RECORDER)
    record.unlink(missing_ok=True)
    env = {"PATH": f"{Path(python).parent}:/usr/bin:/bin", "HOME": str(work), "PYTHONNOUSERSITE": "1",
           "PYTHONPATH": str(plugin), "NBVAL_RECORD": str(record),
           "CUDACHECK_CACHE_DIR": str(cache or work / "cache"), "JUPYTER_DATA_DIR": str(work / "jupyter"),
           "JUPYTER_PATH": str(work / "jupyter"), "IPYTHONDIR": str(work / "ipython")}
    proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "nbval_record",
                           "--nbval-lax", "--rootdir", notebooks, notebooks], cwd=notebooks, env=env,
                          capture_output=True, text=True)
    cells = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return proc, cells


def figures_without_data(cells):
    """(notebook, call) of each data figure that did not come out as an image, and each
    cell that said it had no measurements."""
    from_notebooks = []
    for cell in cells:
        images = any("image/png" in o["mime"] for o in cell["outputs"])
        for call in DATA_FIGURES:
            if call in cell["source"] and not images:
                from_notebooks.append((cell["notebook"], call))
        if any("No measurements to show" in o["text"] for o in cell["outputs"]):
            from_notebooks.append((cell["notebook"], cell["source"].splitlines()[0]))
    return from_notebooks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", default=str(ROOT / ".venv-colab"))
    ap.add_argument("--work", default=None, help="folder for the wheel and the notebooks (default: a temporary one)")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="colab-check-"))
    wheel = build_wheel(work)
    python = colab_venv(a.venv)
    extra = planned_installs(python, wheel, work) - MAY_INSTALL
    install(python, wheel)
    proc, cells = run_chapters(python, work)
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    lost = figures_without_data(cells)
    print(f"{len(cells)} cells ran; pip would also have installed: {sorted(extra) or 'nothing else'}; "
          f"figures without data: {lost or 'none'}")
    return int(proc.returncode != 0 or bool(extra) or bool(lost))


if __name__ == "__main__":
    sys.exit(main())
