"""Build a reveal.js deck of every chapter, for a lecture, from the same notebooks as the
site, into _build/html/slides/ (run `make book` first: the decks use its freshly executed
notebooks; without them, the committed notebooks' outputs).

    python scripts/build_slides.py          # or: make slides
    python scripts/build_slides.py --pdf    # and a PDF of each deck, for handouts (Chromium)

What a deck shows, slide by slide, and what goes to the speaker's notes (key S opens
reveal.js's speaker view), is scripts/slides/compose.py's: one idea per slide, at most
about 40 words and 15 lines of code, the prose as notes; the chapter's own metadata
(Jupyter's Slide Type) decides where the author set it.

Each deck is a folder that travels (a USB stick, a lecture hall's PC with no network):

    slides/01_naive/index.html      the deck; its figures are inside it
    slides/01_naive/lib/            reveal.js, MathJax and, where the deck has widgets, the
                                    widget manager and require.js (the book's own copies,
                                    book/_static)
    slides/01_naive/@jupyter-widgets/   the widget manager's icon fonts, which it asks for
                                    beside the page
    slides/01_naive/01_naive.pdf    with --pdf: one page per slide

Nothing is loaded from another host or from outside the folder. The slides are
1280 x 720 (WIDTH x HEIGHT), scaled by reveal.js to the screen; each slide's figure or
widget is fitted in the browser to the room its slide leaves above the band at the bottom
(BAND_PX) where the arrows and the slide number are (document.body.dataset.slides says
"ready" once reveal.js has started). tests/site/test_slides_browser.py walks every deck.
"""
import argparse
import html
import shutil
from pathlib import Path

import nbformat
import yaml
from nbconvert import SlidesExporter
from slides import compose, redraw  # scripts/slides/
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "html" / "slides"
TEMPLATES = ROOT / "scripts" / "slides"
STATIC = ROOT / "book" / "_static"
WIDGET_FONTS = ROOT / "book" / "_extra" / "book" / "@jupyter-widgets"
LIB = "lib"                           # the deck's own copy of what it loads, beside it
WIDTH, HEIGHT = 1280, 720             # a 16:9 projector, and the slide reveal.js scales to the screen
BAND_PX = 70                          # the bottom of a slide, kept for the arrows and the slide number
# What a deck loads, from book/_static: (folder there, files or folders under it).
LIBRARIES = {"revealjs": ["dist", "plugin/notes", "LICENSE"],
             "mathjax": ["tex-chtml.js", "output", "LICENSE"]}
WIDGET_LIBRARY = {"widgets": ["require.js", "embed-amd.js"]}


def chapters():
    """The notebook chapters of the table of contents (pages such as the instructor's
    guide are not notebooks and get no deck)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    stems = [Path(entry["file"]).name for entry in toc.get("chapters", []) if "file" in entry]
    return [stem for stem in stems if (ROOT / "book" / f"{stem}.ipynb").exists()]


def book_title():
    return yaml.safe_load((ROOT / "_config.yml").read_text())["title"]


def source_notebook(stem, executed=ROOT / "_build" / "jupyter_execute"):
    for candidate in (Path(executed) / "book" / f"{stem}.ipynb", ROOT / "book" / f"{stem}.ipynb"):
        if candidate.exists():
            return candidate
    return None


def with_alt_text(nb):
    """A figure's alt text on its output, where the template finds it: the site takes it
    from the cell's mystnb metadata, nbconvert writes none."""
    for cell in nb.cells:
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
        for out in cell.get("outputs", []) if alt else ():
            if "image/png" in out.get("data", {}):
                out.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = alt
    return nb


def exporter():
    c = Config()
    c.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.SlidesExporter.template_name = "book_slides"
    c.SlidesExporter.reveal_theme = "white"
    c.SlidesExporter.reveal_transition = "none"
    c.SlidesExporter.reveal_number = "c/t"
    c.SlidesExporter.reveal_width = str(WIDTH)
    c.SlidesExporter.reveal_height = str(HEIGHT)
    c.SlidesExporter.reveal_url_prefix = f"{LIB}/revealjs"
    c.SlidesExporter.exclude_input_prompt = True
    c.SlidesExporter.exclude_output_prompt = True
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"remove-input", "hide-input", "hide-cell"}
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    return SlidesExporter(config=c)


def copy_libraries(folder, widgets):
    """The deck's own copy of reveal.js, MathJax and, for widgets, the widget manager."""
    wanted = dict(LIBRARIES, **(WIDGET_LIBRARY if widgets else {}))
    for lib, names in wanted.items():
        for name in names:
            src, dst = STATIC / lib / name, Path(folder) / LIB / lib / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
    if widgets and WIDGET_FONTS.is_dir():
        shutil.copytree(WIDGET_FONTS, Path(folder) / "@jupyter-widgets", dirs_exist_ok=True)


def build_deck(stem, src, out, slides_exporter=None):
    """One chapter's deck into out/<stem>/; returns the warnings of the figures kept as drawn
    for the site and of the composer."""
    nb = with_alt_text(nbformat.read(src, as_version=4))
    redrawn = [f"{stem}: {w}" for w in redraw.redraw(nb)]   # (compose's name their chapter too)
    slides, warnings = compose.compose(nb, stem)
    warnings = redrawn + warnings
    deck_nb = compose.slides_notebook(nb, slides, book_title())
    body, _ = (slides_exporter or exporter()).from_notebook_node(
        deck_nb, resources={"slides": {"lib": LIB, "width": WIDTH, "height": HEIGHT, "band": BAND_PX},
                            "metadata": {"name": slides[0].title if slides else stem}})
    folder = Path(out) / stem
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(body)
    copy_libraries(folder, widgets="widgets" in nb.metadata)
    return warnings


def handout_module():
    """scripts/slides/handout.py (it needs Selenium, which only printing does)."""
    from slides import handout
    return handout


def build(out=OUT, executed=ROOT / "_build" / "jupyter_execute", pdf=False):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    slides_exporter = exporter()
    built = []
    for stem in chapters():
        src = source_notebook(stem, executed)
        if src is None:
            continue
        for warning in build_deck(stem, src, out, slides_exporter):
            print(f"warning: {warning}")
        built.append(stem)
    links = "".join(f'<li><a href="{s}/index.html">{html.escape(s)}</a>'
                    + (f' (<a href="{s}/{s}.pdf">PDF</a>)' if pdf else "") + "</li>" for s in built)
    (out / "index.html").write_text(f"<!doctype html><meta charset='utf-8'><title>Slides</title>"
                                    f"<h1>Slides, one deck per chapter</h1><ul>{links}</ul>")
    if pdf:
        handout = handout_module()
        driver = handout.chromium()
        try:
            for stem in built:
                pages = handout.print_deck(out / stem / "index.html", out / stem / f"{stem}.pdf", driver)
                print(f"{stem}.pdf: {pages} pages")
        finally:
            driver.quit()
    print(f"wrote {len(built)} decks to {out}" + (" with their PDFs" if pdf else ""))
    return built


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", action="store_true", help="also print each deck to a PDF, one page a slide")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    build(args.out, pdf=args.pdf)
