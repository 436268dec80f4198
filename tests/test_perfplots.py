"""The performance plots and tables: with the reference data they draw it; without any
(a copy of the course that lost its data/ folder) each says so in a sentence, and none
raises."""
import pytest
from matplotlib.figure import Figure

from tiling_course import perfdata, perfplots

KERNELS = [("naive", 16), ("tiled", 16), ("cublas", None)]
PLOTS = {
    "speedup_plot": lambda: perfplots.speedup_plot(tiles=(16, 32)),
    "time_plot": lambda: perfplots.time_plot(KERNELS),
    "cublas_fraction": lambda: perfplots.cublas_fraction(KERNELS[:2]),
    "roofline": lambda: perfplots.roofline([("naive", 16), ("tiled", 16)]),
    "ladder_plot": lambda: perfplots.ladder_plot(),
}
TABLES = {
    "ladder_table": lambda: perfplots.ladder_table(),
    "bpg_table": lambda: perfplots.bpg_table(),
}


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_plots_draw_the_reference_data(name):
    fig = PLOTS[name]()
    assert isinstance(fig, Figure), fig
    ax = fig.axes[0]
    points = sum(len(line.get_xdata()) for line in ax.lines) + sum(len(c.get_offsets()) for c in ax.collections)
    bars = sum(p.get_height() > 0 for p in ax.patches)
    assert points + bars >= 2, f"{name} drew {points} points and {bars} bars"
    assert perfdata.reference().device in ax.get_title()


@pytest.mark.parametrize("name", sorted(PLOTS) + sorted(TABLES))
def test_without_data_each_plot_and_table_says_so(name, monkeypatch):
    monkeypatch.setattr(perfdata, "_load_all", lambda: ())
    shown = {**PLOTS, **TABLES}[name]()
    assert isinstance(shown, perfplots.NoData), shown
    assert repr(shown).startswith(perfplots.NoData.PREFIX) and "data" in shown._repr_markdown_()
