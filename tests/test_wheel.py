"""Installed from its wheel, as pip installs it in Colab, the runtime has every file it
compiles with: a kernel using cooperative groups runs plain and checked from an empty folder."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = r'''
import numpy as np, kernels
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
print("ran from", cudacheck.__file__)
'''


def test_the_wheel_holds_the_runtime_and_runs_from_an_empty_folder(tmp_path):
    # Built from a copy of the package's sources, so that no stale build/ folder fills the gaps.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "kernels"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree
                                         else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(src)], check=True)
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    include = ROOT / "kernels" / "cpu" / "include"
    missing = [str(p.relative_to(ROOT)) for p in include.rglob("*") if p.is_file()
               and str(p.relative_to(ROOT)) not in names]
    assert not missing, f"left out of the wheel: {missing}"
    site, work = tmp_path / "site", tmp_path / "empty"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True)
    # The installed package first; the dependencies (NumPy, clang) from this environment.
    env = {**os.environ, "PYTHONPATH": str(site), "CUDACHECK_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", KERNEL], cwd=work, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert str(site) in out.stdout
