"""The error heatmaps: errors within float32 rounding count as none, and the panels of one
figure share one colour scale, so a correct product never looks hotter than a wrong one.

And issue 13's rules for every figure the book draws (BOOK_FIGURES, as the chapters call
them): at most style.MAX_WIDTH_IN wide, no text under style.MIN_FONT_PT, and a PNG that
carries its smallest font and dpi (style.StampingCanvas), both saved directly and through
IPython's inline backend, as the notebooks display it. What the reader sees is checked in
tests/site/test_browser.py: it reads that stamp back from each image the site serves and
measures the width the page shows it at."""
import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from tiling_course import demos, figures, perfplots, style, warps


def test_a_correct_float32_product_shows_no_error(rng):
    M = rng.uniform(-1, 1, (40, 300)).astype(np.float32)
    N = rng.uniform(-1, 1, (300, 30)).astype(np.float32)
    P = M @ N   # float32, rounded differently from the float64 reference
    assert np.abs(P - M.astype(np.float64) @ N).max() > 0
    assert figures.error(P, M, N).max() == 0
    ax = figures.error_heatmap(P, M, N, "right").axes[0]
    assert ax.get_title().splitlines()[1].startswith("0 of 1200 elements wrong")


def test_the_panels_of_a_heatmap_figure_share_one_scale():
    fig = demos.heatmaps("no_second_barrier")
    limits = {im.get_clim() for ax in fig.axes for im in ax.get_images()}
    assert len(limits) == 1 and next(iter(limits))[1] > 0.1, limits


def test_barrier_in_branch_is_right_on_the_cpu_runtime_and_wrong_on_the_gpu_as_chapter_3_says():
    from tiling_course import corpus
    bug = corpus.WRONG["barrier_in_branch"]
    M, N, P = bug.run(backend="cpu", check=False, rng=np.random.default_rng(0))
    assert figures.error(P, M, N).max() == 0
    stored = corpus.stored_gpu_result("barrier_in_branch")
    assert stored is not None and (figures.error(stored[0], M, N) > 0).sum() > 0


BOOK_FIGURES = {
    "thread_map": lambda: figures.thread_map(width=6, block=4),
    "tiling_idea": lambda: figures.tiling_idea(width=8, tile=2, out=(2, 1)),
    "edge_loads": lambda: figures.edge_loads(width=6, tile=4, block=(1, 1), phase=1),
    "heatmaps": lambda: demos.heatmaps("no_first_barrier"),
    "layout": lambda: warps.layout(),
    "thread_work": lambda: figures.thread_work("ladder5_warptiled"),
    "thread_work_1": lambda: figures.thread_work("ladder1_coarsened"),
    "speedup_plot": lambda: perfplots.speedup_plot(tiles=(2, 4, 8, 16, 32)),
    "time_plot": lambda: perfplots.time_plot([("naive", 16), ("tiled", 8), ("tiled", 16), ("tiled", 32),
                                              ("tiled_bounds", 32), ("tiled_dynamic", 32), ("cublas", None)]),
    "cublas_fraction": lambda: perfplots.cublas_fraction([("naive", 16), ("tiled", 32)]),
    "roofline": lambda: perfplots.roofline([("naive", 16), ("tiled", 32)]),
    "ladder_plot": lambda: perfplots.ladder_plot(),
}


@pytest.mark.parametrize("name", sorted(BOOK_FIGURES))
def test_figures_are_drawn_for_the_projector(name):
    fig = BOOK_FIGURES[name]()
    assert isinstance(fig, Figure), fig
    assert fig.get_size_inches()[0] <= style.MAX_WIDTH_IN + 1e-9, fig.get_size_inches()
    assert style.smallest_font_pt(fig) >= style.MIN_FONT_PT, sorted(set(style.fonts(fig)))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    stamp = style.png_text(buf.getvalue())
    assert float(stamp[style.STAMP_FONT]) == style.smallest_font_pt(fig) and stamp[style.STAMP_DPI] == "100"


def test_the_inline_backend_saves_the_stamp():
    """A notebook shows a figure through IPython's print_figure (bbox_inches="tight"):
    the stamp must survive that path, and a retina PNG must say its doubled dpi."""
    from IPython.core.pylabtools import print_figure
    fig = figures.thread_map(width=6, block=4)
    stamp = style.png_text(print_figure(fig, "png", bbox_inches="tight"))
    assert stamp[style.STAMP_FONT] == "9" and stamp[style.STAMP_DPI] == "100", stamp
    stamp = style.png_text(print_figure(fig, "retina", bbox_inches="tight"))
    assert stamp[style.STAMP_DPI] == "200", stamp
