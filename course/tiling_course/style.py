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

import functools

import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
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
    """Draw under the book's RC, and finish a returned Figure (anything else, such as a
    NoData sentence, is returned as it is)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with plt.rc_context(RC):
            out = func(*args, **kwargs)
        return finish(out) if isinstance(out, Figure) else out
    return wrapper


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
