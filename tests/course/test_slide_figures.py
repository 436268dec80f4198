"""The book's figures drawn for a lecture deck (issue 43, item 1): style.slide_version and the
figure functions' slide versions (style.drawing_for_slides), which scripts/slides/redraw.py
uses. A slide's figure fills the slide's room, its smallest label is SLIDE_LABEL_PX in its PNG,
and no two of its texts overlap that did not on the site; the site's drawing never changes."""
import io

import pytest
from matplotlib.figure import Figure

from tiling_course import demos, figures, perfplots, style
from tiling_course.measure import hopperdata


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def smallest_px(fig):
    return style.smallest_font_pt(fig) * fig.dpi / 72


# The figures whose site drawing overlapped at slide size before the slide versions.
CROWDED = {
    "thread map": lambda: figures.thread_map(width=6, block=4),
    "speed-up": lambda: perfplots.speedup_plot(tiles=(2, 4, 8, 16, 32)),
    "heatmaps": lambda: demos.heatmaps("no_first_barrier"),
    "edge loads": lambda: figures.edge_loads(width=6, tile=4, block=(1, 1), phase=1),
    "hopper": hopperdata.plot,
}


@pytest.mark.parametrize("name", sorted(CROWDED))
def test_a_crowded_figure_has_a_slide_version_that_fits_and_reads(name):
    with style.drawing_for_slides():
        drawn = CROWDED[name]()
    for fig in drawn if isinstance(drawn, list) else [drawn]:
        assert isinstance(fig, Figure)
        assert style.slide_version(fig) == [], name
        assert tuple(fig.get_size_inches() * fig.dpi) == pytest.approx(style.SLIDE_ROOM_PX)
        assert smallest_px(fig) >= style.SLIDE_LABEL_PX - 1e-6


def test_hopper_draws_a_figure_a_gpu_on_slides_and_one_figure_on_the_site():
    runs = hopperdata.datasets()
    site = hopperdata.plot()
    with style.drawing_for_slides():
        slides = hopperdata.plot()
    assert isinstance(site, Figure) and len(site.axes) == len(runs)
    assert isinstance(slides, list) and len(slides) == len(runs)
    assert [fig.axes[0].get_title() for fig in slides] == [run.device for run in runs]


def test_the_site_drawing_does_not_depend_on_a_deck_having_been_drawn():
    before = png(figures.thread_map(width=5, block=2))
    with style.drawing_for_slides():
        slide = figures.thread_map(width=5, block=2)
    after = png(figures.thread_map(width=5, block=2))
    assert before == after
    assert not style.for_slides()
    cells = [t.get_text() for t in slide.axes[0].texts]
    assert cells and all("\n" not in c and c.startswith("b") and " t" in c for c in cells)


def test_thinned_ticks_keep_the_axis_limits_and_its_direction(rng):
    """An image of random size whose y axis runs downwards, with a tick at every row and
    column, which the site's size holds apart: on the slide, whose 22-px labels would run
    into each other, its ticks are thinned until none do, the image shows the same rows and
    columns the same way up, and every tick left names its own position."""
    rows, cols = rng.integers(18, 26, size=2)
    fig = Figure(figsize=(8, 8))
    ax = fig.add_subplot()
    ax.imshow(rng.random((rows, cols)))
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    style.finish(fig)
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    assert ylim[0] > ylim[1] and not style.overlaps(fig)
    assert style.slide_version(fig) == []
    assert ax.get_xlim() == pytest.approx(xlim) and ax.get_ylim() == pytest.approx(ylim)
    assert not style.overlaps(fig)
    # two-digit column numbers 22 px high are wider than a column: thinned; the rows may fit
    assert 2 <= len(ax.get_xticks()) < cols and 2 <= len(ax.get_yticks()) <= rows
    for axis in (ax.xaxis, ax.yaxis):
        assert [t.get_text() for t in axis.get_ticklabels()] == [f"{loc:g}" for loc in axis.get_ticklocs()]
