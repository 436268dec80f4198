"""What the book's widgets share: the tile sizes they offer, building a widget from its
spec, figures as data URIs, small matrices drawn as HTML grids, one block's checked-mode
trace, and the predict-first widgets' states."""
import base64
import html
import io
import re
import warnings
from functools import lru_cache

from .. import switch, traces

TILES = (2, 4, 8, 16, 32)


def build(spec):
    """The widget that a spec (name, hint, controls, render, initial) describes."""
    name, hint, controls, render, initial = spec
    return switch.switch(name, hint, controls, render, initial)


# A widget's picture on a slide: the room its controls and its sentence leave it on a
# 1280 x 720 slide, so that the deck need not shrink the widget below its labels' size.
SLIDE_PICTURE_PX = (1080, 320)


def png_data_uri(fig, dpi=72):
    """A matplotlib figure as a data: URI of a PNG (white background, no metadata that varies);
    for a deck (style.for_slides()), drawn at slide size (style.slide_version) at its own dpi."""
    from .. import style
    if style.for_slides():
        clashes = style.slide_version(fig, SLIDE_PICTURE_PX)
        if clashes:   # scripts/slides/redraw.py reports it
            warnings.warn(f"a widget's picture at slide size: {len(clashes)} pair(s) of texts overlap "
                          f"({clashes[0][0].get_text()[:30]!r} and {clashes[0][1].get_text()[:30]!r})", stacklevel=2)
        dpi = fig.dpi
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white", bbox_inches="tight",
                metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# --------------------------------------------------------------------------- grids of cells
# Small matrices drawn as HTML tables (text, so the page stays light with every state
# embedded, and the browser test compares what each cell says).

GRID_STYLE = ("<style>.tc-grid {border-collapse: collapse; font-size: 0.72em; margin: 0;} "
              ".tc-grid td {border: 1px solid #999; min-width: 3.4em; height: 1.9em; text-align: center; "
              "padding: 0 3px; white-space: nowrap;} .tc-gridbox {margin: 0.2em 1.4em 0.6em 0;} "
              ".tc-gridcap {font-weight: bold; font-size: 0.8em; margin-bottom: 2px; white-space: nowrap;} "
              ".tc-grid td.tc-out {background: #f4f4f4; border-style: dashed; color: #999;} "
              ".tc-grid td.tc-load {background: #9ecae1;} .tc-grid td.tc-zero {background: #fdd0a2;} "
              ".tc-grid td.tc-done {background: #deebf7;} .tc-grid td.tc-sum {background: #c7e9c0;} "
              ".tc-grid td.tc-edge-r {border-right: 3px solid #c00;} "
              ".tc-grid td.tc-edge-b {border-bottom: 3px solid #c00;} "
              ".tc-grids {display: flex; flex-wrap: wrap; align-items: flex-start;}</style>")


def grid(caption, rows, cols, cell):
    """An HTML table of rows x cols cells; cell(r, c) -> (text, css class or '')."""
    body = []
    for r in range(rows):
        tds = []
        for c in range(cols):
            text, cls = cell(r, c)
            tds.append(f"<td class='{cls}'>{text}</td>" if cls else f"<td>{text}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<div class='tc-gridbox'><div class='tc-gridcap'>{caption}</div>"
            f"<table class='tc-grid'>{''.join(body)}</table></div>")


def grids(*tables):
    return f"<div class='tc-grids'>{''.join(tables)}</div>"


def phase_loads(report, width, phase, pairs=(("M", "Mds"), ("N", "Nds"))):
    """From a trace of one block: in phase `phase`, for each global array, {thread: (row,
    col) it loaded} and {thread: the shared slot it wrote}."""
    first = 1 + 2 * phase  # the interval of this phase's loads (intervals are cut at barriers)
    out = {}
    for src, dst in pairs:
        loads = {a.thread[:2]: traces.rc(a.index, width) for a in report.trace
                 if a.array == src and a.op == "R" and a.interval == first}
        slots = {a.thread[:2]: tuple(a.index) for a in report.trace
                 if a.array == dst and a.op == "W" and a.interval == first}
        out[src] = (loads, slots)
    return out


@lru_cache(maxsize=None)
def block_trace(kernel, width, tile, block):
    """One traced checked run of `block` (a widget's states read it several times: every
    phase of a block is in the one trace)."""
    return traces.record(kernel, width, tile, blocks=[block])


# ----------------------------------------------------------------- predict, then see
# Widgets that ask for a prediction before they show anything: a second control holds the
# reader's guess, its first option "?" shows only the question; every other option shows
# what really happened (a run recorded now, or the stored GPU record) and whether the
# guess was right.

NO_GUESS = "?"


def inline_code(text):
    """Plain text as HTML, its `code` spans (Markdown's backticks, which an HTML widget
    would show as they are) set as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def predict(question, guess, right, reveal):
    """One state of a predict-first widget: the question, and unless `guess` is NO_GUESS,
    whether it is `right` and what happened (`reveal`, HTML)."""
    head = f"<p class='tc-state-text'>{inline_code(question)}</p>"
    if guess == NO_GUESS:
        return head + "<p class='tc-state-text'><em>Choose your prediction to see what happened.</em></p>"
    verdict = "Right." if guess == right else f"Not this time: the answer is {right}."
    return head + f"<p class='tc-state-text'><strong>{html.escape(verdict)}</strong></p>" + reveal
