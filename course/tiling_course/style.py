"""The book's plot style, defined once for figures, perfplots and warps: the Okabe-Ito
colour-blind-safe palette, markers and line styles that tell series apart without colour,
font sizes for the projector, and a stamp in every PNG the book draws of its smallest font,
so that the browser test can check the text as the reader sees it.

The font rule (issue 13): no figure text may be drawn smaller than MIN_TEXT_PX CSS pixels
on the site. A font of s points in a figure saved at d dpi is s * d / 72 pixels of the PNG,
and the page shows the PNG at (displayed width / natural width) of its size, so the check
is  min_font_pt * dpi / 72 * displayed_px / natural_px >= MIN_TEXT_PX. Figures are drawn
at most MAX_WIDTH_IN wide with fonts of at least MIN_FONT_PT, which keeps this true in
the site's content column (about 690 px at 1280 px, 755 px at 1024 px)."""

import contextlib
import contextvars
import functools
import textwrap

import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

# Okabe & Ito (2008), "Color universal design": distinguishable with every common colour
# vision deficiency. Ordered so that the first colours are the most distinct.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "bluish green": "#009E73", "vermillion": "#D55E00",
             "reddish purple": "#CC79A7", "sky blue": "#56B4E9", "yellow": "#F0E442", "black": "#000000"}
PALETTE = list(OKABE_ITO.values())
BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, BLACK = PALETTE
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":"]
HATCHES = ["", "//", "..", "xx"]

MIN_TEXT_PX = 9       # the smallest text the site may show (issue 13's projector check)
MIN_FONT_PT = 9       # the smallest font any figure uses
MAX_WIDTH_IN = 8.5    # the widest figure (the site shows ~690 px; the PNG is 100 dpi)
STAMP_FONT = "tiling_course:min_font_pt"
STAMP_DPI = "tiling_course:dpi"

RC = {
    "font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
    "legend.fontsize": 9, "legend.title_fontsize": 9, "figure.titlesize": 11, "figure.dpi": 100,
    "axes.prop_cycle": cycler(color=PALETTE) + cycler(marker=MARKERS),
    "lines.markersize": 6, "axes.grid": False,
}


def series(i):
    """Colour, marker and line style of the i-th series: each differs from its neighbours'
    in more than colour."""
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def squares(ax, corners, **kwargs):
    """Unit squares with these (x, y) corners drawn as one collection (kwargs: its facecolor or
    facecolors, edgecolor, alpha, ...), above the axes' patches (a background they lie on) and
    below its lines. A figure of a thousand cells drawn as patches spends seconds adding and
    drawing them one at a time; a collection is drawn in one call."""
    ax.add_collection(PatchCollection([Rectangle(xy, 1, 1) for xy in corners], zorder=1.5, **kwargs),
                      autolim=False)


def tint(colour, amount=0.35):
    """A light tint of a palette colour (mixed with white), for backgrounds under text."""
    import matplotlib.colors as mc
    r, g, b = mc.to_rgb(colour)
    return (1 - amount * (1 - r), 1 - amount * (1 - g), 1 - amount * (1 - b))


def fonts(fig):
    """Font sizes in points of every visible, non-empty text of the figure (its tick labels
    as last drawn)."""
    return [t.get_fontsize() for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]


def smallest_font_pt(fig):
    """The smallest font of the figure, after drawing it (so tick labels exist)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return min(fonts(fig))


class StampingCanvas(FigureCanvasAgg):
    """An Agg canvas whose PNGs carry the figure's smallest font (points) and the dpi they
    were drawn at, as PNG text chunks: what the browser test reads back from the site's
    images. IPython's inline backend saves a figure through its canvas, so a notebook's
    PNG is stamped too."""

    def print_png(self, filename_or_obj, *, metadata=None, pil_kwargs=None, **_):
        # print_figure passes dpi, facecolor, ... to a print method outside matplotlib;
        # Agg's print_png takes them from the figure, so they are dropped here as it does.
        sizes = fonts(self.figure)
        stamp = {STAMP_DPI: f"{self.figure.dpi:g}"}
        if sizes:
            stamp[STAMP_FONT] = f"{min(sizes):g}"
        return super().print_png(filename_or_obj, metadata={**stamp, **(metadata or {})},
                                 pil_kwargs=pil_kwargs)


def finish(fig):
    """Close the figure (a notebook shows only the returned copy) and give it the stamping
    canvas."""
    plt.close(fig)
    StampingCanvas(fig)
    return fig


def styled(func):
    """Draw under the book's RC, and finish a returned Figure, or each of a list of them (a
    figure's panels on slides of their own); anything else, such as a NoData sentence, is
    returned as it is."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with plt.rc_context(RC):
            out = func(*args, **kwargs)
        if isinstance(out, list) and out and all(isinstance(f, Figure) for f in out):
            return [finish(f) for f in out]
        return finish(out) if isinstance(out, Figure) else out
    return wrapper


# Whether figures are being drawn for a lecture deck (scripts/slides/redraw.py sets it): a
# figure function whose site drawing cannot be enlarged to a slide's room without its texts
# overlapping draws its slide version then (one panel a figure, shorter labels in its cells).
# The site's drawing never depends on it.
_FOR_SLIDES = contextvars.ContextVar("for_slides", default=False)


def for_slides():
    """True while figures are drawn for a deck."""
    return _FOR_SLIDES.get()


@contextlib.contextmanager
def drawing_for_slides():
    """Draw figures for a deck inside this block."""
    token = _FOR_SLIDES.set(True)
    try:
        yield
    finally:
        _FOR_SLIDES.reset(token)


def png_text(data):
    """The text chunks (tEXt) of a PNG's bytes, as a dict."""
    import struct
    out, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"tEXt":
            key, _, value = data[pos + 8:pos + 8 + length].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        pos += 12 + length
    return out


# --------------------------------------------------------------------------- slide size
# A lecture deck shows a figure in a slide's room (about 1180 x 580 px at 1280 x 720) and
# its labels must be at least 20 px there (issue 43), where the site's are 12.5 px in a
# 690-px column. The same drawing at that size is the site's figure with every font scaled
# alike, in the room's shape; where its texts then run into each other, the ways out that
# keep every number the site shows are tried in turn, each only where it is the cause.

# what a 1280 x 720 slide leaves a figure below a title of one line (the deck shows it at
# 0.96 of its size on that screen: 22 px labels show at 21)
SLIDE_ROOM_PX = (1180, 540)
SLIDE_LABEL_PX = 22           # the smallest text of a slide's figure, in its PNG (20 px or more shown)


def _texts(fig):
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (t.axes is None or t.axes.get_visible())]


def overlaps(fig, drawn=False):
    """The pairs of the figure's visible texts whose boxes overlap, as laid out now (`drawn`:
    the figure has not changed since it was last drawn or laid out, which then need not be
    done again). Laid out without rendering (Figure.draw_without_rendering): a draw's layout
    and tick labels, and the texts' extents, without the pixels, a fraction of a draw's time."""
    if not drawn:
        fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    texts = _texts(fig)
    boxes = [t.get_window_extent(renderer) for t in texts]
    return [(texts[i], texts[j]) for i in range(len(texts)) for j in range(i + 1, len(texts))
            if boxes[i].overlaps(boxes[j])]


def _scale_fonts(fig, factor):
    """Every font of the figure times `factor` (tick labels through their axis, which draws
    them again)."""
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = axis.get_ticklabels()
            ticks.update(labels)
            if labels:
                axis.set_tick_params(labelsize=labels[0].get_fontsize() * factor)
    for text in fig.findobj(Text):
        if text not in ticks:
            text.set_fontsize(text.get_fontsize() * factor)


def _tick_axis(text):
    """The Axis whose tick label `text` is, or None."""
    for ax in text.figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if text in axis.get_ticklabels() or text in axis.get_ticklabels(minor=True):
                return axis
    return None


def _fewer_ticks(axis, crowded):
    """Every other major tick label of the axis, leaving out `crowded` (numbers: their
    neighbours tell the rest), within the axis's limits as they were; a category's name
    is turned instead (each bar keeps its name)."""
    labels = [t.get_text() for t in axis.get_ticklabels()]
    if _names(axis):
        axis.set_tick_params(labelrotation=45 if axis.axis_name == "x" else 0)
        for t in axis.get_ticklabels():
            t.set_horizontalalignment("right")
        return
    shown = axis.get_view_interval()   # (high, low) where the axis is inverted: kept so
    low, high = sorted(shown)
    ticks = [(loc, text) for loc, text in zip(axis.get_ticklocs(), labels) if low <= loc <= high]
    drop = next((i for i, (_, text) in enumerate(ticks) if text == crowded.get_text()), 0)
    kept = ticks[1 - drop % 2::2]
    axis.set_ticks([loc for loc, _ in kept], [text for _, text in kept])
    axis.set_view_interval(*shown, ignore=True)


def _wrap(text, share=0.6):
    """The text in lines of about `share` of its longest; False where it is short already."""
    lines = text.get_text().split("\n")
    longest = max(len(line) for line in lines)
    if longest <= 12 or text.get_text().startswith("$"):
        return False
    text.set_text("\n".join(textwrap.fill(line, max(12, int(longest * share))) for line in lines))
    return True


def _turned(axis):
    return any(t.get_rotation() for t in axis.get_ticklabels())


def _names(axis):
    """Whether the axis's tick labels are names (categories), not numbers."""
    return any(c.isalpha() for t in axis.get_ticklabels() for c in t.get_text().replace("mathdefault", ""))


def _ease(a, b):
    """One step that may part two overlapping texts; False where none applies."""
    # of two tick labels (or one), an axis of numbers is thinned first, one of names turned once
    ticks = [(axis, t) for axis, t in ((_tick_axis(a), a), (_tick_axis(b), b))
             if axis is not None and not (_names(axis) and _turned(axis))]
    ticks.sort(key=lambda pair: _names(pair[0]))
    if ticks:
        _fewer_ticks(*ticks[0])
    elif _tick_axis(a) is not None or _tick_axis(b) is not None:
        return False
    elif a.axes is not None and a.axes is b.axes and a.axes.title in (a, b):   # a bar's number under it
        bottom, top = a.axes.get_ylim()
        a.axes.set_ylim(bottom, top + 0.1 * (top - bottom))
    elif a.axes is not None and a.axes is b.axes and a.axes.get_aspect() != "auto":
        a.axes.set_aspect("auto")
    else:   # a vertical label longer than its panel first, else the longer text
        return _wrap(max((a, b), key=lambda t: (t.get_rotation() == 90, len(t.get_text()))))
    return True


def slide_version(fig, room_px=SLIDE_ROOM_PX, label_px=SLIDE_LABEL_PX):
    """The figure redrawn for a slide, in place: the room's size and shape (a PNG saved
    "tight" loses the margins a square figure leaves), every font scaled so that the
    smallest is label_px in its PNG, any line wider than the room wrapped, laid out again;
    then, while texts overlap that did not on the site, a step at a time (_ease) until none
    applies. Returns the pairs of texts that still overlap and did not on the site (none:
    the figure is fit for the slide)."""
    site = {tuple(sorted((id(a), id(b)))) for a, b in overlaps(fig)}
    fig.set_size_inches(room_px[0] / fig.dpi, room_px[1] / fig.dpi)
    smallest = min(t.get_fontsize() for t in _texts(fig))
    _scale_fonts(fig, max(1.0, label_px / (smallest * fig.dpi / 72)))
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    fig.draw_without_rendering()
    drawn = True   # each layout is most of the time a deck takes to build: none is done twice
    for text in _texts(fig):   # a line wider than the room would widen the saved PNG, which the slide shrinks
        wide = text.get_window_extent(fig.canvas.get_renderer()).width
        if wide > 0.95 * room_px[0]:
            drawn = not _wrap(text, 0.95 * room_px[0] / wide) and drawn
    for _ in range(24):
        new = [(a, b) for a, b in overlaps(fig, drawn) if tuple(sorted((id(a), id(b)))) not in site]
        if not any(_ease(a, b) for a, b in new):
            return new   # (the figure as it was measured: nothing eased)
        drawn = False
        if fig.get_layout_engine() is None:
            fig.tight_layout()
    return [(a, b) for a, b in overlaps(fig) if tuple(sorted((id(a), id(b)))) not in site]
