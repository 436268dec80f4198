"""`make slides` builds a reveal.js deck per chapter from the notebooks themselves."""
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_chapter_gets_a_deck_with_one_slide_per_section(tmp_path):
    spec = importlib.util.spec_from_file_location("build_slides", ROOT / "scripts" / "build_slides.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build(tmp_path)
    assert built == mod.chapters() and len(built) >= 5
    for stem in built:
        deck = (tmp_path / f"{stem}.slides.html").read_text()
        cells = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]
        sections = sum(1 for c in cells if c["cell_type"] == "markdown" and re.match(r"#{1,2} ", "".join(c["source"])))
        assert "reveal.js" in deck and deck.count("<section") >= max(3, sections)
        assert "google.colab" not in deck          # the set-up cell is skipped
        assert "__syncthreads" in deck or stem in ("01_naive", "05_performance")
    assert "01_naive.slides.html" in (tmp_path / "index.html").read_text()
