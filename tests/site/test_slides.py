"""`make slides` builds a reveal.js deck per chapter from the notebooks themselves, which
loads nothing from another host and leaves out what belongs to a reader at a desk
(tests/site/test_slides_browser.py pages through the decks in a browser)."""
import json
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file


def _module():
    return load_script("build_slides")


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    mod = _module()
    out = tmp_path_factory.mktemp("slides")
    built = mod.build(out, executed=out / "none")   # the committed notebooks
    return mod, out, built


def chapter_headings(stem):
    """(level, text) of every heading of a chapter's markdown before its exercises, wherever
    it stands in its cell (a line starting with #'s, outside code and directive fences)."""
    found = []
    for cell in json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        fence = None
        for line in "".join(cell["source"]).splitlines():
            m = re.match(r"(`{3,}|:{3,})", line)
            if fence is None and m:
                fence = m.group(1)
            elif fence is not None and line.strip() == fence:
                fence = None
            elif fence is None and (h := re.match(r"(#{1,6})\s+(.*)", line)):
                if re.match(r"#{1,2} Exercises", line):
                    return found
                found.append((len(h.group(1)), h.group(2).strip()))
    return found


def plain(markdown_or_html):
    """A heading's words without markup, as both sides write it."""
    text = re.sub(r"<[^>]+>|[`*]|\u00b6|&#182;", "", markdown_or_html)
    return " ".join(text.replace("&amp;", "&").replace("&#39;", "'").split())


def test_every_chapter_gets_a_deck_with_one_slide_per_section(decks):
    """Each `#`/`##` heading opens a slide of its own and each `###` a sub-slide, also where
    the heading stands in the middle of a cell."""
    mod, out, built = decks
    assert built == mod.chapters() and len(built) >= 5
    for stem in built:
        deck = (out / f"{stem}.slides.html").read_text()
        # What each slide (a <section> without another inside it) begins with: its first heading,
        # if nothing but that heading's cell comes before it.
        openings = set()
        for part in deck.split("<section")[1:]:
            body = part.split(">", 1)[1]
            first = re.search(r"<h([1-6])[^>]*>(.*?)</h\1>", body, re.S)
            before = body[:first.start()] if first else ""
            if first and not re.search(r"<(p|pre|li|img|table)\b", before):
                openings.add(plain(first.group(2)))
        headings = chapter_headings(stem)
        assert len(headings) >= 3, stem
        missing = [t for level, t in headings if level <= 3 and plain(t) not in openings]
        assert not missing, f"{stem}: these headings do not open a slide: {missing}"
        assert "reveal.js" in deck and deck.count("<section") >= len([h for h in headings if h[0] <= 2])
        assert "google.colab" not in deck          # the set-up cell is skipped
        assert "__syncthreads" in deck or stem in ("01_naive", "05_performance")
    assert "01_naive.slides.html" in (out / "index.html").read_text()


def test_a_cell_is_split_at_each_heading_outside_its_fences():
    mod = _module()
    cell = nbformat.v4.new_markdown_cell("The end of one section.\n\n## The next\nIts text.\n\n```c\n"
                                         "# define X 1\n```\n\n### A part\n:::{note}\n# not a heading\n:::\n")
    pieces = mod.split_at_headings(cell)
    assert [p.source.split("\n")[0] for p in pieces] == ["The end of one section.", "## The next", "### A part"]
    assert "# define X 1" in pieces[1].source and "# not a heading" in pieces[2].source
    assert len({p.id for p in pieces}) == 3 and "".join(p.source for p in pieces).count("\n") >= 8
    assert mod.split_at_headings(nbformat.v4.new_markdown_cell("## Alone\ntext"))[0].source == "## Alone\ntext"


def test_decks_load_nothing_from_another_host(decks):
    """Every script and style sheet comes from the site (../_static/...), and the files
    they name are in book/_static, which the site serves."""
    _, out, built = decks
    for stem in built:
        deck = (out / f"{stem}.slides.html").read_text()
        refs = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"', deck)
        assert refs, stem
        remote = [r for r in refs if re.match(r"(https?:)?//", r)]
        assert not remote, f"{stem} loads {remote}"
        for ref in refs:
            assert ref.startswith("../_static/"), ref
            assert (ROOT / "book" / "_static" / ref.removeprefix("../_static/")).is_file(), ref
        assert "MathJax.Hub" not in deck and "jquery" not in deck.lower() and "mermaid" not in deck
        assert 'class="reveal tc-paginating"' in deck and "Reveal.initialize" in deck
    assert (out / "@jupyter-widgets").is_dir()   # the widget manager's icon fonts, beside the decks


def test_decks_leave_out_prompts_set_up_imports_and_exercises(decks):
    mod, out, built = decks
    for stem in built:
        deck = (out / f"{stem}.slides.html").read_text()
        assert not re.search(r"In&nbsp;\[\d*\]|Out\[\d+\]", deck), stem
        assert "exercises.check(" not in deck and not re.search(r"<h[12][^>]*>Exercises", deck), stem
        assert not re.search(r"<pre>\s*<span class=\"kn\">from</span> <span class=\"nn\">tiling_course</span>"
                             r" <span class=\"kn\">import</span>[^\n]*</pre>", deck), stem
        assert not re.search(r"(?<!<code>)%%cuda|%%</span>", deck), stem   # (the text may name it)


def test_prepare_keeps_the_lecture_and_makes_each_question_a_slide():
    mod = _module()
    from tiling_course import quiz
    nb = nbformat.read(ROOT / "book" / "02_tiling.ipynb", as_version=4)
    prepared = mod.prepare(nb, "02_tiling")
    sources = [c.source for c in prepared.cells]
    # Left out: set-up, import-only cells, and the exercises (up to the end of the chapter).
    assert not any(mod.is_setup(c) for c in prepared.cells)
    assert not any("exercises.check(" in s or s.startswith("### Exercise") for s in sources)
    assert any(s.startswith("## Questions for the room") for s in sources)
    # The kernel: shown as CUDA, without its cell magic.
    kernel = next(c for c in prepared.cells if "matmul_tiled" in c.source and c.cell_type == "code")
    assert kernel.metadata["magics_language"] == "cuda" and not kernel.source.startswith("%%")
    # A cell that only draws shows its output, not its Python.
    plot = next(c for c in prepared.cells if c.source.startswith("perfplots.speedup_plot("))
    assert "remove-input" in plot.metadata["tags"]
    # One slide per question, answers lettered, the right one in the speaker notes.
    questions = [c for c in prepared.cells if c.cell_type == "raw"]
    assert len(questions) == len(quiz.questions("02_tiling"))
    for cell, q in zip(questions, quiz.questions("02_tiling")):
        assert cell.metadata["slideshow"]["slide_type"] == "subslide"
        assert q["question"] in cell.source and cell.source.count("<details") == len(q["answers"])
        right = next(a for a in q["answers"] if a["correct"])
        notes = cell.source.split('<aside class="notes">', 1)[1]
        assert right["answer"] in notes
    # Links to another chapter lead to its page on the site.
    assert not any(re.search(r"\]\(\d\d_\w+\.ipynb", s) for s in sources)


def test_every_figure_on_a_slide_has_the_alt_text_the_site_gives_it(decks):
    """nbconvert writes no alt text for an output's image (it puts in a placeholder); the decks
    carry the one of the figure's cell (mystnb metadata), as the site's pages do."""
    _, out, built = decks
    default = "No description has been provided for this image"
    for stem in built:
        deck = (out / f"{stem}.slides.html").read_text()
        cells = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]
        alts = [c["metadata"]["mystnb"]["image"]["alt"] for c in cells
                if c["metadata"].get("mystnb", {}).get("image", {}).get("alt")
                and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]
        images = BeautifulSoup(deck, "html.parser").find_all("img")   # (a widget's, in its state's JSON, is not one)
        shown = [img.get("alt", "") for img in images]
        unsaid = [str(img)[:80] for img in images if img.get("alt") in (None, "", default)]
        assert not unsaid, (stem, unsaid)
        assert all(a in shown for a in alts) and len(images) >= len(alts), stem
