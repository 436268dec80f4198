"""`make slides` builds a lecture deck per chapter from the notebooks themselves
(scripts/build_slides.py, scripts/slides/compose.py): one idea per slide, the prose as the
speaker's notes, each deck a folder that needs nothing outside it
(tests/site/test_slides_browser.py walks the decks in a browser)."""
import json
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from slides import compose

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file


def _module():
    import build_slides
    return build_slides


@pytest.fixture
def decks(built_decks):
    return (_module(), *built_decks)


def chapter_headings(stem):
    """(level, text) of every heading of a chapter's markdown before its exercises, wherever
    it stands in its cell (a line starting with #'s, outside code and directive fences), but
    in the cells the author left out of the slides (Slide Type "skip")."""
    found = []
    for cell in json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]:
        if cell["cell_type"] != "markdown" or cell["metadata"].get("slideshow", {}).get("slide_type") == "skip":
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


def slides_of(deck_html):
    """The slides of a built deck: each innermost <section>."""
    soup = BeautifulSoup(deck_html, "html.parser")
    return [s for s in soup.select(".slides section") if not s.find("section")]


def test_every_chapter_gets_a_flat_deck_with_a_title_slide_and_a_slide_per_section(decks):
    """Each heading down to `###` opens a slide, also where it stands in the middle of a
    cell; the first slide is the chapter's title; every slide is a stack of one (→ walks
    them all); a chapter's questions have slides, and no slide is an empty heading."""
    mod, out, built = decks
    assert built == mod.chapters() and len(built) >= 8
    for stem in built:
        deck = (out / stem / "index.html").read_text()
        slides = slides_of(deck)
        stacks = BeautifulSoup(deck, "html.parser").select(".slides > section")
        assert len(stacks) == len(slides), f"{stem}: slides stacked under others"
        assert slides[0]["data-tc-kind"] == "title" and slides[0].find("h1"), stem
        titles = {plain(h.decode_contents()) for s in slides for h in s.find_all(["h1", "h2", "h3"])[:1]}
        headings = chapter_headings(stem)
        missing = [t for level, t in headings if level <= 3 and plain(t) not in titles
                   and not t.startswith("Questions for the room")]
        assert not missing, f"{stem}: these headings open no slide: {missing}"
        for s in slides[1:]:
            assert s.find(["p", "pre", "img", "table", "li"]) or s.find(class_="jp-OutputArea-output"), \
                f"{stem}: a slide with nothing but its title: {s.get_text(' ', strip=True)[:80]}"
        questions = [s for s in slides if s.get("data-tc-kind") == "question"]
        from tiling_course import quiz
        assert len(questions) == len(quiz.questions(stem)), stem
        assert "google.colab" not in deck          # the set-up cell is left out
    assert "01_naive/index.html" in (out / "index.html").read_text()


def test_a_deck_is_a_folder_that_needs_nothing_outside_it(decks):
    """Every script and style sheet it names is in its own folder (lib/), and so are the
    widget manager's fonts where it has widgets; nothing from another host."""
    _, out, built = decks
    for stem in built:
        folder = out / stem
        deck = (folder / "index.html").read_text()
        refs = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"', deck)
        assert refs, stem
        for ref in refs:
            assert not re.match(r"(https?:)?//|/|\.\.", ref), f"{stem} loads {ref}"
            assert (folder / ref).is_file(), f"{stem}: {ref} is not in its folder"
        assert "MathJax.Hub" not in deck and "jquery" not in deck.lower() and "mermaid" not in deck
        assert (folder / "lib" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
        if '<script type="application/vnd.jupyter.widget-view+json">' in deck:
            assert (folder / "lib" / "widgets" / "embed-amd.js").is_file()
            assert any((folder / "@jupyter-widgets").rglob("*.woff2")), stem
        assert "../_static" not in deck and "<img src=\"" not in deck.replace('src="data:', ""), stem


def test_decks_leave_out_prompts_set_up_imports_and_exercises(decks):
    _, out, built = decks
    for stem in built:
        deck = (out / stem / "index.html").read_text()
        assert not re.search(r"In&nbsp;\[\d*\]|Out\[\d+\]", deck), stem
        assert "exercises.check(" not in deck and not re.search(r"<h[12][^>]*>Exercises", deck), stem
        assert not re.search(r"(?<!<code>)%%cuda|%%</span>", deck), stem   # (the text may name it)


def test_every_slide_holds_one_idea_and_the_rest_of_the_prose_is_in_its_notes():
    """As composed: at most WORDS words and CODE_LINES lines a slide; every word of the
    chapter's prose that is not on a slide is in the notes; the kernel shown as CUDA,
    without its cell magic; a cell that only draws shows its output alone."""
    nb = nbformat.read(ROOT / "book" / "02_tiling.ipynb", as_version=4)
    slides, warnings = compose.compose(nb, "02_tiling")
    assert not warnings
    for s in slides:
        assert s.words <= compose.WORDS and s.lines <= compose.CODE_LINES, (s.title, s.words, s.lines)
    shown = "\n".join(b.cell.source for s in slides for b in s.blocks)
    notes = "\n".join(n for s in slides for n in s.notes)
    said = shown + notes
    prose = [c for c in nb.cells if c.cell_type == "markdown"]
    # "## Warps": its first sentence under the title, all of it in the notes
    assert "in groups of 32 called **warps**." in shown and "It numbers the" not in shown
    assert "called **warps**. It numbers the" in " ".join(notes.split())
    assert all(p.split("\n")[-1][:60] in said for p in (c.source for c in prose[:12]) if "$$" not in p)
    kernel = "__shared__ float Mds[TILE_WIDTH][TILE_WIDTH];"
    assert kernel in shown and "%%cuda" not in shown and "```cuda" in shown
    assert "perfplots.speedup_plot(" not in shown
    assert any(b.fits and any("image/png" in o.get("data", {}) for o in b.cell.outputs)
               for s in slides if s.title == "Speed-up" for b in s.blocks)


def test_the_authors_slide_type_decides_and_an_unmarked_chapter_degrades_to_titles_code_and_figures():
    """Jupyter's Slide Type: "skip" leaves a cell out, "notes" puts it in the notes, "-"
    shows it whole. Unmarked, a short paragraph shows, a long one goes to the notes with
    its first sentence under the title; a kernel longer than a slide goes on to the next
    under the same title; a section of questions without questions leaves no slide."""
    long = " ".join(["A long paragraph about tiling."] + ["Its words go on and on."] * 12)
    cells = [nbformat.v4.new_markdown_cell("# 9. A chapter\n\nWhat it is about."),
             nbformat.v4.new_markdown_cell(f"## Tiles\n\n{long}"),
             nbformat.v4.new_markdown_cell("A short point."),
             nbformat.v4.new_markdown_cell("Said aside."),
             nbformat.v4.new_markdown_cell("Not in the deck."),
             nbformat.v4.new_markdown_cell(f"## Marked\n\n{long}"),
             nbformat.v4.new_code_cell("%%cuda k\n" + "\n".join(f"int x{i} = {i};" for i in range(40))),
             nbformat.v4.new_markdown_cell("## Questions for the room\n\nVote first."),
             nbformat.v4.new_code_cell("from tiling_course import quiz\nquiz.show('none')")]
    cells[3].metadata["slideshow"] = {"slide_type": "notes"}
    cells[4].metadata["slideshow"] = {"slide_type": "skip"}
    cells[5].metadata["slideshow"] = {"slide_type": "-"}
    slides, warnings = compose.compose(nbformat.v4.new_notebook(cells=cells), "none")
    assert [s.title for s in slides][:3] == ["9. A chapter", "Tiles", "Marked"]
    assert slides[0].kind == "title" and slides[0].notes == ["What it is about."]
    tiles = slides[1]
    assert [b.cell.source for b in tiles.blocks] == ["A long paragraph about tiling.", "A short point."]
    assert long in tiles.notes[0] and any("Said aside." in n for n in tiles.notes)
    assert "Not in the deck." not in repr(slides)
    assert slides[2].blocks[0].cell.source == long and warnings   # marked: shown whole, and said to be long
    code = [s for s in slides if any(b.lines for b in s.blocks)]
    assert len(code) >= 3 and all(s.title == "Marked" and s.lines <= compose.CODE_LINES for s in code)
    assert [s.continued for s in code[1:]] == [True] * (len(code) - 1)
    assert not any(s.title.startswith("Questions") for s in slides)


def test_a_cell_is_split_at_each_heading_outside_its_fences():
    cell = nbformat.v4.new_markdown_cell("The end of one section.\n\n## The next\nIts text.\n\n```c\n"
                                         "# define X 1\n```\n\n### A part\n:::{note}\n# not a heading\n:::\n")
    pieces = compose.split_at_headings(cell)
    assert [p.source.split("\n")[0] for p in pieces] == ["The end of one section.", "## The next", "### A part"]
    assert "# define X 1" in pieces[1].source and "# not a heading" in pieces[2].source
    assert len({p.id for p in pieces}) == 3
    assert compose.split_at_headings(nbformat.v4.new_markdown_cell("## Alone\ntext"))[0].source == "## Alone\ntext"


def test_a_long_table_is_cut_between_rows_with_its_header_on_each_piece():
    rows = "".join(f"<tr><td>row {i}</td><td>{i * 1.5}</td></tr>" for i in range(40))
    table = f"<table class='kernels-table'><caption>Numbers</caption><thead><tr><th>a</th><th>b</th></tr></thead>" \
            f"<tbody>{rows}</tbody></table>"
    pages = compose.table_pages(table)
    assert len(pages) >= 3 and all(px <= compose.ROOM_PX for _, px in pages)
    assert all("<thead>" in p for p, _ in pages) and sum("<caption>" in p for p, _ in pages) == 1
    assert "".join(re.findall(r"row \d+", "".join(p for p, _ in pages))) == "".join(f"row {i}" for i in range(40))


def test_every_figure_on_a_slide_has_the_alt_text_the_site_gives_it(decks):
    """nbconvert writes no alt text for an output's image (it puts in a placeholder); the decks
    carry the one of the figure's cell (mystnb metadata), as the site's pages do."""
    _, out, built = decks
    default = "No description has been provided for this image"
    for stem in built:
        deck = (out / stem / "index.html").read_text()
        cells = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]
        alts = [c["metadata"]["mystnb"]["image"]["alt"] for c in cells
                if c["metadata"].get("mystnb", {}).get("image", {}).get("alt")
                and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]
        images = BeautifulSoup(deck, "html.parser").find_all("img")   # (a widget's, in its state's JSON, is not one)
        unsaid = [str(img)[:80] for img in images if img.get("alt") in (None, "", default)]
        assert not unsaid, (stem, unsaid)
        assert all(a in [img.get("alt", "") for img in images] for a in alts), stem
