"""Build reveal.js slides of every chapter from the same notebooks as the site, into
_build/html/slides/ (run `make book` first: the slides use its freshly executed
notebooks; without them, the committed notebooks' outputs).

    python scripts/build_slides.py        # or: make slides

The decks are served with the site and load nothing from another host: reveal.js from the
site's copy (book/_static/revealjs, see its README), MathJax from the site's
(book/_static/mathjax), the widget manager and require.js from book/_static/widgets. So
they work offline, and `python -m http.server -d _build/html` serves them.

What a deck holds. Each `#`/`##` heading starts a slide and each `###` a sub-slide
(reveal.js's vertical stack); there is no second copy of the content: the slides are the
notebooks, with what belongs to a reader at a desk left out:

- the Colab set-up cell and the cells that only import;
- the exercises (the `## Exercises` section, up to the next `##` heading);
- prompts (`In [16]:`);
- the input of a cell that only draws (a figure, a table, a widget: one or two lines of
  Python whose output is the point), and of cells the site hides;
- the quiz: each question for the room becomes a slide of its own, its answers lettered
  and each opening (a <details>) to say whether it is right and why, with the answers
  also in the speaker notes (key S).

%%cuda cells show their kernel, highlighted as CUDA. A figure has the alt text the site
gives it (its cell's mystnb metadata). Links to another chapter lead to its page on the site.

Every slide fits 1280 x 720 (WIDTH x HEIGHT). A section of a chapter is often longer
than a slide, so the deck is paginated in the browser, where the real heights are known:
once fonts, images, MathJax and widgets are ready, a slide whose content is taller than
the slide is cut before the first block that does not fit (a paragraph, a list, a code
cell's input, an output), and the rest goes to a new slide below it, headed with the
section's title "(continued)". Code too long for one slide is cut between lines; a
figure is at most FIGURE_MAX_PX tall. Only then is reveal.js started
(`document.body.dataset.slides` says "ready"). tests/site/test_slides_browser.py pages through
every deck offline and checks that every slide fits.
"""
import copy
import html
import re
import shutil
from pathlib import Path

import nbformat
from nbconvert import SlidesExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "html" / "slides"
TEMPLATES = ROOT / "scripts" / "slides"
STATIC = "../_static"                 # the site's static folder, as seen from a deck
WIDTH, HEIGHT = 1280, 720             # a 16:9 projector, and the slide reveal.js scales to the screen
FIGURE_MAX_PX = 540                   # a figure's height on a slide, below a heading
WIDGET_FONTS = ROOT / "book" / "_extra" / "book" / "@jupyter-widgets"

DISPLAY_MIMES = {"image/png", "image/svg+xml", "image/jpeg", "text/html", "text/markdown",
                 "application/vnd.jupyter.widget-view+json"}
IMPORT = re.compile(r"^\s*(import\s+\S|from\s+\S+\s+import\s)")


def chapters():
    """The notebook chapters of the table of contents (pages such as the instructor's
    guide are not notebooks and get no deck)."""
    return [stem for stem in re.findall(r"file:\s*book/(\S+)", (ROOT / "_toc.yml").read_text())
            if (ROOT / "book" / f"{stem}.ipynb").exists()]


def source_notebook(stem, executed=ROOT / "_build" / "jupyter_execute"):
    for candidate in (Path(executed) / "book" / f"{stem}.ipynb", ROOT / "book" / f"{stem}.ipynb"):
        if candidate.exists():
            return candidate
    return None


def _heading(cell):
    """(level, text) of a markdown cell that starts with a heading, else (None, None)."""
    if cell.cell_type != "markdown":
        return None, None
    m = re.match(r"(#{1,6})\s+(.*)", cell.source.lstrip().split("\n", 1)[0])
    return (len(m.group(1)), m.group(2).strip()) if m else (None, None)


def is_setup(cell):
    """The Colab set-up cell, and code cells that only import (nothing to show)."""
    if cell.cell_type != "code":
        return False
    if "colab-setup" in cell.get("metadata", {}).get("tags", []):
        return True
    lines = [ln for ln in cell.source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and all(IMPORT.match(ln) for ln in lines)


def is_quiz(cell):
    return cell.cell_type == "code" and re.search(r"\bquiz\.show\(", cell.source) is not None


def only_draws(cell):
    """A cell whose output is the point: at most two lines of Python (imports aside) and a
    figure, table, widget or rendered text among its outputs."""
    if cell.cell_type != "code" or cell.source.lstrip().startswith("%%"):
        return False
    lines = [ln for ln in cell.source.splitlines() if ln.strip() and not IMPORT.match(ln)]
    shown = {m for o in cell.get("outputs", []) for m in o.get("data", {})}
    return len(lines) <= 2 and bool(shown & DISPLAY_MIMES)


def _markdown_for_slides(source):
    """MyST that nbconvert's Markdown does not know, made plain: a directive such as
    ```{note} or ```{admonition} Title (or :::{tip}) becomes a box with its title, its
    options (`:class: tip`) dropped; links to another chapter's notebook lead to its page
    on the site."""
    def box(m):
        kind, title, body = m.group(2), m.group(3).strip(), m.group(4)
        title = title or kind.capitalize()
        body = re.sub(r"\A(\s*:[\w-]+:[^\n]*\n)+", "", body + "\n")   # the directive's options
        return (f'<div class="tc-admonition"><p class="tc-admonition-title">{html.escape(title)}</p>\n\n'
                f"{body.strip()}\n\n</div>")
    source = re.sub(r"(`{3,}|:{3,})\{([\w-]+)\}([^\n]*)\n(.*?)\n\1[ \t]*$", box, source, flags=re.S | re.M)
    return re.sub(r"\]\((\d\d_[\w-]+)\.ipynb", r"](../book/\1.html", source)


def question_cells(chapter):
    """One raw HTML cell per question for the room (see the module docstring)."""
    from tiling_course import quiz
    cells = []
    for q in quiz.questions(chapter):
        parts = [f'<div class="tc-question"><p class="tc-question-text">{q["question"]}</p>']
        if q.get("code"):
            parts.append(f'<pre class="tc-question-code"><code>{q["code"]}</code></pre>')
        notes = []
        if q["type"] == "numeric":
            parts.append('<p class="tc-question-hint">(a number)</p>')
            right = [a for a in q["answers"] if a.get("correct")]
            for a in right:
                value = a.get("value", f"{a.get('range', '')}")
                parts.append(f'<details class="tc-answer"><summary>The answer</summary><p>{value}. '
                             f'{a.get("feedback", "")}</p></details>')
                notes.append(f"<p>Answer: {value}. {a.get('feedback', '')}</p>")
        else:
            for a in q["answers"]:
                verdict = "&#10004; Right." if a["correct"] else "&#10008; Not this one."
                parts.append(f'<details class="tc-answer"><summary>{a["answer"]}</summary>'
                             f'<p>{verdict} {a.get("feedback", "")}</p></details>')
                if a["correct"]:
                    notes.append(f"<p>{a['answer']}: {a.get('feedback', '')}</p>")
        parts.append(f'<aside class="notes">{"".join(notes)}</aside></div>')
        cell = nbformat.v4.new_raw_cell("\n".join(parts))
        cell.metadata["raw_mimetype"] = "text/html"
        cell.metadata["slideshow"] = {"slide_type": "subslide"}
        cells.append(cell)
    return cells


FENCE = re.compile(r"^(`{3,}|:{3,})")


def split_at_headings(cell):
    """A markdown cell as one cell per heading: the text before its first heading, then each
    heading with what follows it up to the next. A deck starts a slide at a heading only
    where a cell starts with one, and a chapter's cell often ends one section and begins the
    next. Lines inside a fence (code, a directive) are never headings."""
    if cell.cell_type != "markdown":
        return [cell]
    parts, fence = [[]], None
    for line in cell.source.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None and re.match(r"#{1,6}\s", line) and "".join(parts[-1]).strip():
            parts.append([])
        parts[-1].append(line)
    if len(parts) == 1:
        return [cell]
    pieces = []
    for i, part in enumerate(parts):
        piece = copy.deepcopy(cell)
        piece.source = "".join(part).strip("\n")
        if i and "id" in piece:
            piece.id = f"{cell.id}-{i}"   # ids are unique within a notebook
        pieces.append(piece)
    return pieces


def prepare(nb, stem):
    """The notebook as its deck shows it (see the module docstring): cells left out or
    changed, and each cell's slide type."""
    nb = copy.deepcopy(nb)
    cells, skipping = [], False
    for cell in [piece for c in nb.cells for piece in split_at_headings(c)]:
        level, title = _heading(cell)
        if level is not None and level <= 2:
            skipping = title.lower().startswith("exercises")
        if skipping or is_setup(cell):
            continue
        cell.metadata.pop("slideshow", None)
        tags = cell.metadata.get("tags", [])
        if is_quiz(cell):
            cells += question_cells(stem)
            continue
        if cell.cell_type == "markdown":
            cell.source = _markdown_for_slides(cell.source)
            kind = "slide" if level in (1, 2) else "subslide" if level == 3 else "-"
        else:
            kind = "-"
            alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
            for out in cell.get("outputs", []) if alt else ():
                if "image/png" in out.get("data", {}):
                    out.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = alt
            magic = re.match(r"%%(cuda\w*)[^\n]*\n", cell.source)
            if magic:
                cell.source = cell.source[magic.end():]
                cell.metadata["magics_language"] = "cuda"
            elif only_draws(cell):
                cell.metadata["tags"] = [*tags, "remove-input"]
        cell.metadata["slideshow"] = {"slide_type": kind}
        cells.append(cell)
    nb.cells = cells
    return nb


def exporter():
    c = Config()
    c.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.SlidesExporter.template_name = "book_slides"
    c.SlidesExporter.reveal_url_prefix = f"{STATIC}/revealjs"
    c.SlidesExporter.reveal_theme = "white"
    c.SlidesExporter.reveal_transition = "none"
    c.SlidesExporter.reveal_number = "c/t"
    c.SlidesExporter.reveal_width = str(WIDTH)
    c.SlidesExporter.reveal_height = str(HEIGHT)
    c.SlidesExporter.reveal_scroll = False
    c.SlidesExporter.exclude_input_prompt = True
    c.SlidesExporter.exclude_output_prompt = True
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"remove-input", "hide-input", "hide-cell"}
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    return SlidesExporter(config=c)


def build(out=OUT, executed=ROOT / "_build" / "jupyter_execute"):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    slides = exporter()
    built = []
    for stem in chapters():
        src = source_notebook(stem, executed)
        if src is None or src.suffix != ".ipynb":
            continue
        nb = prepare(nbformat.read(src, as_version=4), stem)
        body, _ = slides.from_notebook_node(nb, resources={"slides": {"static": STATIC, "width": WIDTH,
                                                                        "height": HEIGHT,
                                                                        "figure_max": FIGURE_MAX_PX}})
        (out / f"{stem}.slides.html").write_text(body)
        built.append(stem)
    # The widget manager asks for its icon fonts next to the page, as on the site.
    if WIDGET_FONTS.is_dir():
        shutil.copytree(WIDGET_FONTS, out / "@jupyter-widgets", dirs_exist_ok=True)
    links = "".join(f'<li><a href="{s}.slides.html">{html.escape(s)}</a></li>' for s in built)
    (out / "index.html").write_text(f"<!doctype html><meta charset='utf-8'><title>Slides</title>"
                                    f"<h1>Slides, one deck per chapter</h1><ul>{links}</ul>")
    print(f"wrote {len(built)} decks to {out}")
    return built


if __name__ == "__main__":
    build()
