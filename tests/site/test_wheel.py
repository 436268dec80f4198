"""Installed the way students install it (scripts/colab_install_check.py): the repository's
wheel holds every file of both packages, and the book's kernels (kernels/) inside the
course's; installing it into Google Colab's versions adds only what Colab lacks; every
chapter runs under nbval from a folder that holds only the notebooks; and the figures of
measured data hold data. Also: the installed runtime runs a kernel plain and checked, with a
fresh compile cache (its objects built from the wheel's files), and loads nothing of the
course."""
import os
import subprocess
import sys

import colab_install_check as check
import pytest

import cudacheck
from tests.support import ROOT

pytestmark = pytest.mark.slow

KERNEL = r'''
import sys, numpy as np, cudacheck
src = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <math_constants.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(float* x) {
    auto t = cg::tiled_partition<32>(cg::this_thread_block());
    float v = cg::reduce(t, x[threadIdx.x], cg::plus<float>());
    if (threadIdx.x == 0) x[0] = v + (CUDART_PI_F > 3.0f);
}"""
for check in (False, True):
    x = np.arange(32, dtype=np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=check)(1, 32, (x,))
    assert x[0] == 497, x[0]
course = sorted(m for m in sys.modules if m.startswith("tiling_course"))
print("ran from", cudacheck.__file__, "course modules loaded:", course)
'''

# `wheel` and `colab_install`: tests/conftest.py's fixtures, made once per session.


@pytest.mark.parametrize("folder", sorted(check.SHIPPED))
def test_the_wheel_holds_every_file_of_both_packages_and_every_kernel(wheel, folder):
    assert not check.missing_from(wheel, folder), f"left out of the wheel's {check.SHIPPED[folder]}/"


def test_the_runtime_runs_from_an_empty_folder_and_loads_no_course_module(wheel, tmp_path):
    site, work = tmp_path / "site", tmp_path / "empty"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                    str(wheel)], check=True)
    # The installed runtime first; its dependencies (NumPy, clang) from this environment.
    env = {**os.environ, "PYTHONPATH": str(site), "CUDACHECK_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", KERNEL], cwd=work, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert str(site) in out.stdout and "course modules loaded: []" in out.stdout


def test_every_chapter_runs_from_the_installed_wheel_with_colabs_versions(colab_install, tmp_path):
    extra = colab_install.planned - check.MAY_INSTALL
    assert not extra, f"installing the book in Colab would also install or replace {sorted(extra)}"
    # The session's compile cache: the libraries of kernels the site build or nbval built
    # already are not built again (their keys hold the installed runtime's sources, so the
    # wheel's files are still what builds here: a fresh build from them is the test above).
    proc, cells = check.run_chapters(colab_install.python, tmp_path, cache=cudacheck.config.cache_dir)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    chapters = {c["notebook"] for c in cells}
    assert chapters == {p.name for p in (ROOT / "book").glob("*.ipynb")}, chapters
    assert not check.figures_without_data(cells)
    # The figures asked for are really there: each of the three, in every chapter that draws it.
    drawn = {(c["notebook"], call) for c in cells for call in check.DATA_FIGURES if call in c["source"]
             and any("image/png" in o["mime"] for o in c["outputs"])}
    assert {call for _, call in drawn} == set(check.DATA_FIGURES)


def test_the_graders_sandbox_sees_what_the_wheel_ships_and_no_more(wheel, tmp_path):
    """The packages the sandbox shows a submission (tiling_course.grading.sandbox.public_tree) are
    exactly the wheel's files: no exercise solution, and nothing of the graded assignments'
    hidden tests (assignments/hidden/, outside the packages). Beside them, bytecode of the
    shipped modules only, which the sandbox's Python uses instead of compiling them."""
    import zipfile

    from tiling_course.grading import sandbox
    site = sandbox.public_tree(tmp_path / "site")
    files = [p.relative_to(site) for p in site.rglob("*") if p.is_file()]
    shown = {str(p) for p in files if "__pycache__" not in p.parts}
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if not n.split("/")[0].endswith(".dist-info")}
    assert shown == shipped, (sorted(shown - shipped)[:10], sorted(shipped - shown)[:10])
    compiled = [p for p in files if "__pycache__" in p.parts]
    tag = sys.implementation.cache_tag
    assert len(compiled) > 20 and all(
        p.name.endswith(f".{tag}.pyc") and str(p.parent.parent / (p.name.split(".")[0] + ".py")) in shipped
        for p in compiled), compiled
    assert not any("hidden" in name or "solution" in name for name in shipped)
