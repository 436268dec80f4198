"""A chapter notebook as a lecture: the slides of its deck, one idea per slide, and the
rest of the prose as the speaker's notes (scripts/build_slides.py renders them).

A slide holds at most WORDS words of prose and CODE_LINES lines of code (a long line
counts as the lines it wraps into at CODE_COLUMNS), at most one figure, widget or table,
and no more than fits above the band that the navigation arrows and the slide number
take (ROOM_PX, estimated here; the deck fits figures and widgets to the room that is
really left, in the browser). What does not fit goes on to the next slide, under the
same title. The deck is flat: every slide follows the one before, so the right arrow and
Space visit them all in order.

What a slide shows is decided cell by cell, from the notebook's own metadata where the
author set it (Jupyter's "Slide Type", `metadata.slideshow.slide_type`):

- "skip": left out; "notes": in the speaker's notes only;
- "-", "slide", "subslide", "fragment": shown ("slide" starts a new slide);

and otherwise, for a chapter nobody has marked up, by what the cell is:

- a heading (`#` to `###`) starts a slide titled by it; the chapter's `#` heading makes
  the title slide, its opening prose that slide's notes;
- prose of at most WORDS words is shown; longer prose goes to the notes, and shows on
  the slide only its display formulas, its code blocks, and, under a title with nothing
  else yet, its first sentence where that has at most LEAD_WORDS words;
- a code cell shows its code (a `%%cuda` cell its kernel, without the magic line),
  unless it only draws (the site's `remove-input`, or one or two lines whose output is a
  figure, table or widget); its outputs follow: figures, widgets and tables as they
  are, printed text as code, Markdown output as prose;
- the questions for the room become one slide each, the section's introduction their
  notes (a chapter without questions gets no such slide);
- the Colab set-up, cells that only import, and the exercises are left out.
"""
import base64
import copy
import html
import math
import re
import struct
from dataclasses import dataclass, field

import nbformat

WORDS = 40            # most words of prose on a slide
LEAD_WORDS = 30       # a long paragraph's first sentence shows under its title up to this
CODE_LINES = 15       # most lines of code on a slide
CODE_COLUMNS = 68     # characters of a code line at the deck's code size on a 1280-px slide
PROSE_COLUMNS = 70    # characters of a line of prose at the deck's text size
ROOM_PX = 580         # the height a slide's content may take below its title (estimated)
TITLE_PX, TITLE_COLUMNS = 53, 46   # a line of a title, and the characters it holds
PROSE_LINE_PX, CODE_LINE_PX, BLOCK_GAP_PX = 41, 34, 18
FIT_MIN_PX = 330      # the least room a figure or widget is given
SLIDE_CONTENT_PX = 1228   # the width of a slide's content (1280 less its padding)
TABLE_ROW_PX = 48     # a line of a table's text, at the deck's table size
CAPTION_LINE_PX = 54  # a line of its caption (set looser than the cells)
TABLE_CHAR_PX = 21    # the width of one of its characters, on the safe side (measured: 19 px on
                      # average in a caption, and cells wrap at a word in columns of unequal width;
                      # a table estimated too tall is grown in the browser, up to GROW, to its room)

DISPLAY_MIMES = ("application/vnd.jupyter.widget-view+json", "image/svg+xml", "image/png", "image/jpeg",
                 "text/html", "text/markdown", "text/plain")
FIGURE_MIMES = {"image/png", "image/svg+xml", "image/jpeg", "application/vnd.jupyter.widget-view+json"}
IMPORT = re.compile(r"^\s*(import\s+\S|from\s+\S+\s+import\s)")
FENCE = re.compile(r"^(`{3,}|:{3,})")
HEADING = re.compile(r"(#{1,6})\s+(.*)")
SHOWN_TYPES = {"-", "slide", "subslide", "fragment"}


@dataclass
class Block:
    """One thing a slide shows: `cell` is what nbconvert renders."""
    cell: dict
    words: int = 0
    lines: int = 0
    px: int = 0
    fits: bool = False        # a figure, widget or table: scaled in the browser to the room left
    new_slide: bool = False   # the author asked for a slide of its own


@dataclass
class Slide:
    title: str                       # the heading's Markdown
    kind: str = "content"            # "title", "content" or "question"
    level: int = 2
    continued: bool = False
    blocks: list = field(default_factory=list)
    notes: list = field(default_factory=list)   # Markdown or HTML

    @property
    def words(self):
        return sum(b.words for b in self.blocks)

    @property
    def lines(self):
        return sum(b.lines for b in self.blocks)

    @property
    def px(self):
        return sum(b.px for b in self.blocks)

    @property
    def title_px(self):
        """What a title longer than a line takes beyond its first line."""
        length = len(re.sub(r"[`*]", "", self.title)) + (12 if self.continued else 0)
        return (math.ceil(length / TITLE_COLUMNS) - 1) * TITLE_PX

    def takes(self, block):
        if block.new_slide and self.blocks:
            return False
        if not self.blocks:
            return True
        # a figure, widget or table shares its slide with prose only
        if (block.fits or block.lines) and any(b.fits or (block.fits and b.lines) for b in self.blocks):
            return False
        room = ROOM_PX - self.title_px - self.px - (FIT_MIN_PX if any(b.fits for b in self.blocks) else 0)
        need = max(FIT_MIN_PX, block.px) if block.fits else block.px
        return (self.words + block.words <= WORDS and self.lines + block.lines <= CODE_LINES
                and need <= room)


# --------------------------------------------------------------------------- measuring

def words_of(markdown):
    """Words a reader reads: a formula counts as one, markup as none."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " X ", markdown, flags=re.S)
    text = re.sub(r"<[^>]+>|&\w+;|[*_`#>|\\]", " ", text)
    text = re.sub(r"\]\([^)]*\)", " ", text)
    return len(re.findall(r"[\w'’.,;:()-]*\w[\w'’.,;:()-]*", text))


def code_lines(text):
    """The lines a block of code takes on a slide, long ones wrapped."""
    return sum(max(1, math.ceil(len(line.rstrip()) / CODE_COLUMNS)) for line in text.rstrip("\n").split("\n"))


def prose_px(markdown):
    text = re.sub(r"\$\$.*?\$\$", "", markdown, flags=re.S)
    lines = sum(max(1, math.ceil(len(p) / PROSE_COLUMNS)) for p in text.split("\n") if p.strip())
    display = len(re.findall(r"\$\$.*?\$\$", markdown, flags=re.S))
    return lines * PROSE_LINE_PX + display * 90 + BLOCK_GAP_PX


# --------------------------------------------------------------------------- the cells

def heading_of(cell):
    """(level, text) of a markdown cell that starts with a heading, else (None, None)."""
    if cell.cell_type != "markdown":
        return None, None
    m = HEADING.match(cell.source.lstrip().split("\n", 1)[0])
    return (len(m.group(1)), m.group(2).strip()) if m else (None, None)


def split_at_headings(cell):
    """A markdown cell as one cell per heading: the text before its first heading, then each
    heading with what follows it up to the next. A chapter's cell often ends one section
    and begins the next. Lines inside a fence (code, a directive) are never headings."""
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
    """A cell whose output is the point: the site hides its input, or it is at most two
    lines of Python (imports aside) with a figure, table, widget or rendered text."""
    if cell.cell_type != "code" or cell.source.lstrip().startswith("%%"):
        return False
    if {"remove-input", "hide-input", "hide-cell"} & set(cell.metadata.get("tags", [])):
        return True
    lines = [ln for ln in cell.source.splitlines() if ln.strip() and not IMPORT.match(ln)]
    shown = {m for o in cell.get("outputs", []) for m in o.get("data", {})}
    return len(lines) <= 2 and bool(shown & (FIGURE_MIMES | {"text/html", "text/markdown"}))


def slide_type(cell):
    """The author's Slide Type for this cell, or None where none was set."""
    kind = cell.metadata.get("slideshow", {}).get("slide_type")
    return kind if kind in SHOWN_TYPES | {"skip", "notes"} else None


def markdown_parts(source):
    """Markdown as its blocks, each ("fence", info, text) for code, ("math", text) for a
    display formula, ("directive", text) for a MyST directive, ("prose", text) for the rest;
    blank lines separate blocks outside fences and formulas."""
    parts, buf, fence, info, math_open = [], [], None, "", False

    def flush(kind="prose"):
        text = "\n".join(buf).strip("\n")
        if text.strip():
            parts.append((kind, info, text) if kind == "fence" else (kind, text))
        buf.clear()

    for line in source.split("\n"):
        m = FENCE.match(line)
        if fence is not None:
            buf.append(line)
            if line.strip() == fence:
                flush("directive" if info.startswith("{") else "fence")
                fence = None
        elif math_open:
            buf.append(line)
            if line.rstrip().endswith("$$"):
                flush("math")
                math_open = False
        elif m:
            flush()
            fence, info = m.group(1), line.strip()[len(m.group(1)):].strip()
            buf.append(line)
        elif line.strip().startswith("$$"):
            flush()
            buf.append(line)
            if line.strip() == "$$" or not line.rstrip().endswith("$$") or line.strip() == "$$$$":
                math_open = True
            else:
                flush("math")
        elif not line.strip():
            flush()
        else:
            buf.append(line)
    flush("math" if math_open else "prose")
    return parts


def fence_body(text):
    """The code inside a fenced block (its first and last lines are the fences)."""
    return "\n".join(text.split("\n")[1:-1])


SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z(*`$])")


def lead_sentence(prose):
    """The first sentence of a paragraph, where inline code and formulas hold no break."""
    held = []

    def hold(m):
        held.append(m.group(0))
        return f"\x00{len(held) - 1}\x00"
    text = re.sub(r"`[^`]*`|\$[^$]*\$", hold, " ".join(prose.split()))
    first = SENTENCE_END.split(text, 1)[0]
    return re.sub(r"\x00(\d+)\x00", lambda m: held[int(m.group(1))], first)


# --------------------------------------------------------------------------- blocks

def _markdown_cell(source, tags=()):
    cell = nbformat.v4.new_markdown_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def code_blocks(text, language):
    """Code as blocks of at most CODE_LINES lines on a slide, cut at a blank line where
    one is near the end of a slide's worth."""
    lines, blocks, start = text.rstrip("\n").split("\n"), [], 0
    while start < len(lines):
        end, used = start, 0
        while end < len(lines) and used + code_lines(lines[end]) <= CODE_LINES:
            used += code_lines(lines[end])
            end += 1
        end = max(end, start + 1)
        if end < len(lines):
            blank = [i for i in range(max(start + 1, end - 5), end) if not lines[i].strip()]
            if blank:
                end = blank[-1] + 1
        chunk = "\n".join(lines[start:end]).strip("\n")
        if chunk:
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", chunk)), default=0))
            n = code_lines(chunk)
            blocks.append(Block(_markdown_cell(f"{fence}{language}\n{chunk}\n{fence}", ["tc-code"]),
                                lines=n, px=n * CODE_LINE_PX + BLOCK_GAP_PX))
        start = end
    return blocks


def printed(text, language="text"):
    """What a cell printed: one slide's worth at most (an error report, a long table), the
    whole of it in the notes where it is longer."""
    lines, kept, used = text.rstrip("\n").split("\n"), [], 0
    for line in lines:
        if used + code_lines(line) > CODE_LINES - 1:
            break
        kept.append(line)
        used += code_lines(line)
    if len(kept) == len(lines):
        return code_blocks(text, language), []
    fence = "`" * 3
    return (code_blocks("\n".join(kept + ["\u22ef (the rest in the notes)"]), language),
            [f"{fence}{language}\n{text.rstrip()}\n{fence}"])


def prose_block(markdown):
    return Block(_markdown_cell(markdown), words=words_of(markdown), px=prose_px(markdown))


def output_blocks(cell, output):
    """One output of a code cell, shown as the site shows it (a copy of the cell with
    that output alone, its input hidden); a table too long for a slide, in pieces of
    whole rows (the header on each, the caption on the first)."""
    data = output.get("data", {})
    pieces = [None]
    if "text/html" in data and not (FIGURE_MIMES & set(data)):
        pieces = table_pages("".join(data["text/html"]))
    blocks = []
    for piece, px in pieces if pieces != [None] else [(None, figure_px(data))]:
        shown = copy.deepcopy(cell)
        shown.source = ""
        shown.outputs = [copy.deepcopy(output)]
        if piece is not None:
            shown.outputs[0]["data"] = {"text/html": piece}
        shown.metadata["tags"] = ["remove-input", "tc-fit"]
        blocks.append(Block(shown, px=px, fits=True))
    return blocks


def figure_px(data):
    """The room a figure needs: a PNG its own height (redraw.py drew it for a slide's room;
    shrunk to fit beside prose, its labels would fall under 20 px), within ROOM_PX; any
    other output FIT_MIN_PX (the deck fits it)."""
    png = base64.b64decode("".join(data.get("image/png", "")))
    if png[12:16] != b"IHDR":
        return FIT_MIN_PX
    width, height = struct.unpack(">II", png[16:24])
    return max(FIT_MIN_PX, min(ROOM_PX, height * min(1, SLIDE_CONTENT_PX / width)))


def _text_px(fragment, width_px, line_px=TABLE_ROW_PX):
    """The height of some HTML's text set at the deck's table size in a box this wide."""
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()
    per_line = max(4, int(width_px / TABLE_CHAR_PX))
    return max(1, math.ceil(len(text) / per_line)) * line_px


def table_pages(markup):
    """A table (show.table's: caption, thead, tbody) as [(html, estimated px)], as many
    rows on each as fit ROOM_PX under a title of two lines (its pieces after the first are
    "(continued)", which makes most titles two lines); any other HTML as itself."""
    m = re.match(r"(?s)(\s*<table\b[^>]*>)(.*?)(<thead>.*?</thead>)\s*<tbody>(.*)</tbody>\s*</table>\s*$", markup)
    if not m:
        return [(markup, max(FIT_MIN_PX, len(re.findall(r"<tr\b", markup)) * TABLE_ROW_PX + 60))]
    opening, caption, head, body = m.groups()
    rows = re.findall(r"(?s)<tr\b.*?</tr>", body)
    columns = max(1, len(re.findall(r"<t[hd]\b", head)))
    cell_px = (1280 - 2 * 26) / columns

    def row_px(row):
        return max(_text_px(c, cell_px) for c in re.findall(r"(?s)<t[hd]\b[^>]*>(.*?)</t[hd]>", row) or [""])
    pages, current, used = [], [], _text_px(caption, 1280 - 52, CAPTION_LINE_PX) + row_px(head)
    for row in rows:
        if current and used + row_px(row) > ROOM_PX - TITLE_PX:
            pages.append((current, used))
            current, used = [], row_px(head)
        current.append(row)
        used += row_px(row)
    pages.append((current, used))
    return [(f"{opening}{caption if i == 0 else ''}{head}<tbody>{''.join(page)}</tbody></table>", px)
            for i, (page, px) in enumerate(pages)]


def fence_blocks(info, text):
    """A fenced block: code (a kernel, a diff) over as many slides as it takes; printed text
    (```text) one slide's worth (printed)."""
    body = fence_body(text)
    return printed(body) if info in ("", "text") else (code_blocks(body, info), [])


def markdown_blocks(source, shown, lead):
    """The blocks of some Markdown, and its notes. `shown`: the author marked it for the
    slide (True: all of it shows), for the notes (False), or neither (None: shown when
    short); `lead`: a long text may show its first sentence."""
    source = markdown_for_slides(source)
    if shown is False:
        return [], [source]
    parts = markdown_parts(source)
    prose = [p[1] for p in parts if p[0] in ("prose", "directive")]
    whole = shown or (words_of("\n\n".join(prose)) <= WORDS and not any(p[0] == "directive" for p in parts))
    blocks, notes = [], [] if whole else [source]
    if not whole and lead and prose and parts[0][0] != "directive":
        first = lead_sentence(prose[0])
        if words_of(first) <= LEAD_WORDS:
            blocks.append(prose_block(first))
    for part in parts:
        if part[0] == "fence":
            more, said = fence_blocks(part[1], part[2])
            blocks += more
            notes += said
        elif whole or part[0] == "math":
            blocks.append(prose_block(part[-1]))
    return blocks, notes


def markdown_for_slides(source):
    """MyST that nbconvert's Markdown does not know, made plain: a directive such as
    ```{note} or ```{admonition} Title (or :::{tip}) becomes a box with its title, its
    options (`:class: tip`) dropped; links to another chapter's notebook lead to its page
    on the book's site."""
    def box(m):
        kind, title, body = m.group(2), m.group(3).strip(), m.group(4)
        title = title or kind.capitalize()
        body = re.sub(r"\A(\s*:[\w-]+:[^\n]*\n)+", "", body + "\n")   # the directive's options
        return (f'<div class="tc-admonition"><p class="tc-admonition-title">{html.escape(title)}</p>\n\n'
                f"{body.strip()}\n\n</div>")
    source = re.sub(r"(`{3,}|:{3,})\{([\w-]+)\}([^\n]*)\n(.*?)\n\1[ \t]*$", box, source, flags=re.S | re.M)
    return re.sub(r"\]\((\d\d_[\w-]+)\.ipynb", r"](../../book/\1.html", source)


def cell_blocks(cell, shown, lead):
    """The blocks and notes of one code cell."""
    blocks, notes = [], []
    magic = re.match(r"%%(cuda\w*)[^\n]*\n", cell.source)
    if shown is not False and not only_draws(cell):
        if magic:
            blocks += code_blocks(cell.source[magic.end():], "cuda")
        elif cell.source.strip():
            blocks += code_blocks(cell.source, "python")
    if "remove-output" in cell.metadata.get("tags", []):
        return blocks, notes
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.get("output_type") == "stream":
            if shown is not False:
                text_blocks, said = printed("".join(output.get("text", "")))
                blocks += text_blocks
                notes += said
        elif FIGURE_MIMES & set(data) or "text/html" in data:
            if shown is not False:
                blocks += output_blocks(cell, output)
        elif "text/markdown" in data:
            more, said = markdown_blocks("".join(data["text/markdown"]), False if shown is False else None,
                                         lead=False)
            blocks += more
            notes += said
        elif "text/plain" in data and output.get("output_type") == "execute_result" and shown is not False:
            text_blocks, said = printed("".join(data["text/plain"]))
            blocks += text_blocks
            notes += said
    return blocks, notes


# --------------------------------------------------------------------------- the deck

def question_slides(chapter, title):
    """One slide per question for the room: its answers lettered, each opening (a
    <details>) to say whether it is right and why, the right ones in the notes."""
    from tiling_course import quiz
    slides = []
    for q in quiz.questions(chapter) if chapter in quiz.chapters() else ():
        parts = [f'<div class="tc-question"><p class="tc-question-text">{q["question"]}</p>']
        if q.get("code"):
            parts.append(f'<pre class="tc-question-code"><code>{q["code"]}</code></pre>')
        notes = []
        if q["type"] == "numeric":
            parts.append('<p class="tc-question-hint">(a number)</p>')
            for a in (a for a in q["answers"] if a.get("correct")):
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
        parts.append("</div>")
        cell = nbformat.v4.new_raw_cell("\n".join(parts))
        cell.metadata["raw_mimetype"] = "text/html"
        slides.append(Slide(title, kind="question", blocks=[Block(cell)], notes=notes))
    return slides


class Deck:
    """The slides of one chapter, built cell by cell (see the module docstring)."""

    def __init__(self, chapter):
        self.chapter = chapter
        self.slides = []
        self.pending_notes = []   # prose said before the next thing shown
        self.shown_code = set()
        self.warnings = []

    @property
    def current(self):
        return self.slides[-1] if self.slides else None

    def open(self, title, level, kind="content"):
        self.flush_notes()
        self.fill_empty()
        self.slides.append(Slide(title, kind=kind, level=level))

    def fill_empty(self):
        """A section that showed nothing (its prose all long, its first sentence too)
        shows the start of that sentence, cut at WORDS words, rather than a bare title."""
        s = self.current
        if s is None or s.kind != "content" or s.blocks or not s.notes:
            return
        parts = [p for p in markdown_parts(s.notes[0]) if p[0] == "prose"]
        if parts:
            words = lead_sentence(parts[0][1]).split()
            s.blocks.append(prose_block(" ".join(words[:WORDS - 5]) + (" \u2026" if len(words) > WORDS - 5 else "")))

    def flush_notes(self):
        if self.pending_notes and self.current is not None:
            self.current.notes += self.pending_notes
            self.pending_notes = []

    def place(self, block):
        if block.lines and block.cell.source in self.shown_code:
            return   # the same code again (a kernel shown, then in the cell that runs it)
        if block.lines:
            self.shown_code.add(block.cell.source)
        if self.current is None or self.current.kind == "title":
            # before the first section: under the chapter's title
            self.open(self.current.title if self.current else self.chapter, 2)
            self.current.continued = len(self.slides) > 1
        if not self.current.takes(block):
            s = self.current
            self.flush_notes()
            self.slides.append(Slide(s.title, level=s.level, continued=True))
        if block.words > WORDS or block.lines > CODE_LINES:
            self.warnings.append(f"{self.chapter}: a block of {block.words} words, {block.lines} lines of code "
                                 f"under {self.current.title!r} is more than a slide holds")
        self.current.blocks.append(block)
        self.flush_notes()

    def note(self, markdown):
        self.pending_notes.append(markdown)

    def questions(self, title):
        """The section's questions; its heading's slide, if nothing shows on it, gives way
        to them (its notes go to the first question)."""
        slides = question_slides(self.chapter, title)
        heading = self.current
        if heading is not None and heading.kind == "content" and all(b.words for b in heading.blocks):
            said = [b.cell.source for b in heading.blocks]
            self.pending_notes = heading.notes + said + self.pending_notes
            self.slides.pop()
        if slides:
            slides[0].notes = self.pending_notes + slides[0].notes
            self.pending_notes = []
            self.slides += slides


def compose(nb, chapter):
    """The slides of a chapter's notebook, and the warnings of cells that the author marked
    for a slide but that hold more than one (see the module docstring)."""
    deck = Deck(chapter)
    skipping = False
    for cell in (piece for c in nb.cells for piece in split_at_headings(c)):
        level, title = heading_of(cell)
        if level is not None and level <= 2:
            skipping = re.match(r"exercises?\b", title, re.I) is not None
        kind = slide_type(cell)
        if skipping or is_setup(cell) or kind == "skip":
            continue
        if is_quiz(cell):
            deck.questions(deck.current.title if deck.current else "Questions")
            continue
        shown = True if kind in SHOWN_TYPES else False if kind == "notes" else None
        if cell.cell_type == "markdown":
            body = cell.source
            if level is not None and level <= 3:
                body = cell.source.lstrip().split("\n", 1)[1] if "\n" in cell.source.lstrip() else ""
                if level == 1 and not deck.slides:
                    deck.open(title, 1, kind="title")
                    if body.strip():
                        deck.note(markdown_for_slides(body.strip()))
                        deck.flush_notes()
                    continue
                deck.open(title, level)
            lead = deck.current is not None and not deck.current.blocks and deck.current.kind == "content"
            blocks, notes = markdown_blocks(body, shown, lead) if body.strip() else ([], [])
            for note in notes:
                deck.note(note)
            for i, block in enumerate(blocks):
                block.new_slide = kind == "slide" and i == 0
                deck.place(block)
        elif cell.cell_type == "code":
            blocks, notes = cell_blocks(cell, shown, lead=False)
            for note in notes:
                deck.note(note)
            for block in blocks:
                deck.place(block)
    deck.flush_notes()
    deck.fill_empty()
    return deck.slides, deck.warnings


def slides_notebook(nb, slides, subtitle):
    """The slides as a notebook that nbconvert's reveal.js exporter renders as a flat deck:
    each slide one horizontal slide (slide_type "slide"), its title first, its notes last
    (slide_type "notes"); `slideshow.data` marks what kind of slide it is (data-tc-kind)."""
    out = copy.deepcopy(nb)
    cells = []
    for slide in slides:
        if slide.kind == "title":
            head = _markdown_cell(f"# {slide.title}\n\n<p class=\"tc-subtitle\">{html.escape(subtitle)}</p>")
        elif slide.title:
            more = ' <span class="tc-continued">(continued)</span>' if slide.continued else ""
            head = _markdown_cell(f"{'#' * max(2, slide.level)} {slide.title}{more}")
        else:
            head = _markdown_cell("")
        head.metadata["slideshow"] = {"slide_type": "slide", "data": {"tc_kind": slide.kind}}
        cells.append(head)
        for block in slide.blocks:
            block.cell.metadata["slideshow"] = {"slide_type": "-"}
            cells.append(block.cell)
        if slide.notes:
            notes = _markdown_cell("\n\n".join(slide.notes))
            notes.metadata["slideshow"] = {"slide_type": "notes"}
            cells.append(notes)
    for n, cell in enumerate(cells):
        cell.id = f"slide-cell-{n}"   # (blocks cut from one cell would share its id)
    out.cells = cells
    return out
