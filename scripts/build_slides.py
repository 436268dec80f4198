"""Build reveal.js slides of every chapter from the same notebooks as the site, into
_build/html/slides/ (run `make book` first: the slides use its freshly executed
notebooks; without them, the committed notebooks' outputs).

    python scripts/build_slides.py        # or: make slides

Each `#`/`##` heading starts a slide and each `###` a sub-slide (reveal.js's vertical
stack); the Colab set-up cell is skipped; cells whose input the site hides keep only
their output. There is no second copy of the content: the slides are the notebooks.
"""
import copy
import html
import re
from pathlib import Path

import nbformat
from nbconvert import SlidesExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "html" / "slides"


def chapters():
    """The notebook chapters of the table of contents (pages such as the instructor's
    guide are not notebooks and get no deck)."""
    return [stem for stem in re.findall(r"file:\s*book/(\S+)", (ROOT / "_toc.yml").read_text())
            if (ROOT / "book" / f"{stem}.ipynb").exists()]


def source_notebook(stem):
    for candidate in (ROOT / "_build" / "jupyter_execute" / "book" / f"{stem}.ipynb", ROOT / "book" / f"{stem}.ipynb"):
        if candidate.exists():
            return candidate
    return None


def mark_slides(nb):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        kind = "-"
        if cell.cell_type == "markdown":
            first = cell.source.lstrip().split("\n", 1)[0]
            if re.match(r"#{1,2} ", first):
                kind = "slide"
            elif first.startswith("### "):
                kind = "subslide"
        elif "colab-setup" in tags:
            kind = "skip"
        cell.metadata["slideshow"] = {"slide_type": kind}
    return nb


def build(out=OUT):
    out.mkdir(parents=True, exist_ok=True)
    c = Config()
    c.SlidesExporter.reveal_scroll = True
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"remove-input", "hide-input", "hide-cell"}
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    exporter = SlidesExporter(config=c)
    built = []
    for stem in chapters():
        src = source_notebook(stem)
        if src is None or src.suffix != ".ipynb":
            continue
        body, _ = exporter.from_notebook_node(mark_slides(nbformat.read(src, as_version=4)))
        (out / f"{stem}.slides.html").write_text(body)
        built.append(stem)
    links = "".join(f'<li><a href="{s}.slides.html">{html.escape(s)}</a></li>' for s in built)
    (out / "index.html").write_text(f"<!doctype html><meta charset='utf-8'><title>Slides</title>"
                                    f"<h1>Slides, one deck per chapter</h1><ul>{links}</ul>")
    print(f"wrote {len(built)} decks to {out}")
    return built


if __name__ == "__main__":
    build()
