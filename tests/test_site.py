"""The site builds from the repository with Jupyter Book 1, executing every notebook,
with warnings as errors, and every chapter page holds its figures."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_site_builds_with_warnings_as_errors(tmp_path):
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(tmp_path), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    html = tmp_path / "_build" / "html"
    pages = {p.stem: p.read_text() for p in (html / "book").glob("*.html")}
    assert {"intro", "01_naive", "02_tiling", "03_syncthreads", "04_boundaries"} <= set(pages)
    for name, text in pages.items():
        if name == "intro":
            continue
        assert len(re.findall(r"<img ", text)) >= 1, f"{name} has no figure"
        assert "Traceback" not in text, f"{name} shows a traceback"
    # Kernel cells are highlighted as CUDA C, not as Python.
    assert '<span class="kr">__global__</span>' in pages["01_naive"]
    shutil.rmtree(tmp_path / "_build", ignore_errors=True)
