"""The site builds from the repository with Jupyter Book 1, executing every notebook,
with warnings as errors, and every chapter page holds its figures. The build itself is
the session-scoped ``built_site`` fixture (tests/conftest.py), shared with
tests/site/test_browser.py."""
import re


def test_site_builds_with_warnings_as_errors(built_site):
    assert built_site.returncode == 0, built_site.stdout[-4000:] + built_site.stderr[-4000:]
    html = built_site.html
    pages = {p.stem: p.read_text() for p in (html / "book").glob("*.html")}
    assert {"intro", "01_naive", "02_tiling", "03_syncthreads", "04_boundaries", "05_performance",
            "instructor"} <= set(pages)
    for name, text in pages.items():
        assert "Traceback" not in text, f"{name} shows a traceback"
        if name not in ("intro", "instructor"):   # the pages of prose; every chapter has figures
            assert len(re.findall(r"<img ", text)) >= 1, f"{name} has no figure"
    # Kernel cells are highlighted as CUDA C, not as Python.
    assert '<span class="kr">__global__</span>' in pages["01_naive"]
