"""The performance plots and tables: with the reference data they draw it; without any
(a copy of the course that lost its data/ folder) each says so in a sentence, and none
raises."""
import pytest
from matplotlib.figure import Figure

from tiling_course import perfplots
from tiling_course.measure import model, perfdata

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
    assert perfdata.reference().device in fig.get_suptitle()


BOOK_PLOTS = {   # as the chapters call them, with the most series
    "speedup_plot": lambda: perfplots.speedup_plot(tiles=(2, 4, 8, 16, 32)),
    "time_plot": lambda: perfplots.time_plot(BOOK_KERNELS),
    "throughput_plot": lambda: perfplots.time_plot(BOOK_KERNELS, metric="tflops"),
    "cublas_fraction": lambda: perfplots.cublas_fraction(BOOK_KERNELS[:-1]),
    "roofline": lambda: perfplots.roofline([("naive", 16), ("naive", 32), ("tiled", 8), ("tiled", 16),
                                            ("tiled", 32)]),
    "ladder_plot": lambda: perfplots.ladder_plot(),
}
BOOK_KERNELS = [("naive", 16), ("tiled", 8), ("tiled", 16), ("tiled", 32), ("tiled_bounds", 32),
                ("tiled_dynamic", 32), ("cublas", None)]


def _series(ax):
    """The data series of one panel: labelled lines, scatter sets and bar groups
    (reference lines such as a roof or y = 1 carry no marker and are not counted)."""
    lines = [ln for ln in ax.lines if ln.get_marker() not in (None, "None", "", " ")]
    return len(lines) + len(ax.collections) + len(ax.containers)


@pytest.mark.parametrize("name", sorted(BOOK_PLOTS))
def test_no_panel_has_more_than_five_series(name):
    """Issue 13: facet by device or kernel group rather than crowd one frame; panels of one
    figure share their axes, so they compare at a glance."""
    fig = BOOK_PLOTS[name]()
    counts = [_series(ax) for ax in fig.axes]
    assert counts and max(counts) <= 5 and sum(counts) > 0, counts
    if len(fig.axes) > 1:
        first = fig.axes[0]
        assert all(ax.get_shared_y_axes().joined(first, ax) for ax in fig.axes), "panels must share the y axis"


@pytest.mark.parametrize("name", sorted(BOOK_PLOTS))
def test_plots_use_the_colour_blind_safe_palette(name):
    from matplotlib.colors import to_hex

    from tiling_course import style
    fig = BOOK_PLOTS[name]()
    allowed = {to_hex(c) for c in style.PALETTE} | {"#808080"}
    used = {to_hex(ln.get_color()) for ax in fig.axes for ln in ax.lines}
    used |= {to_hex(p.get_facecolor()) for ax in fig.axes for p in ax.patches if p.get_height() > 0}
    used |= {to_hex(c) for ax in fig.axes for coll in ax.collections for c in coll.get_facecolor()}
    assert used <= allowed, used - allowed


@pytest.mark.parametrize("name", sorted(PLOTS) + sorted(TABLES))
def test_without_data_each_plot_and_table_says_so(name, monkeypatch):
    monkeypatch.setattr(model, "_stored", lambda: ())
    shown = {**PLOTS, **TABLES}[name]()
    assert isinstance(shown, perfplots.NoData), shown
    assert repr(shown).startswith(perfplots.NoData.PREFIX) and "data" in shown._repr_markdown_()


# Occupancy in warps, worked out by hand from the CUDA C Programming Guide's limits: a block of
# t x t threads takes ceil(t*t / 32) warps; blocks per SM are the fewest of the warp, block and
# shared-memory limits (2 t^2 floats plus the driver's reservation per block).
OCCUPANCY = {
    "cc90": {2: (32, 0.5), 4: (32, 0.5), 8: (32, 1.0), 16: (8, 1.0), 32: (2, 1.0)},   # 64 warps, 32 blocks
    "t4": {2: (16, 0.5), 4: (16, 0.5), 8: (16, 1.0), 16: (4, 1.0), 32: (1, 1.0)},     # 32 warps, 16 blocks
}


@pytest.mark.parametrize("device", sorted(OCCUPANCY))
def test_occupancy_counts_warps_not_threads(device):
    limits = {"cc90": perfplots.CC90_LIMITS, "t4": perfplots.T4_LIMITS}[device]
    for tile, (blocks, occupancy) in OCCUPANCY[device].items():
        o = perfplots.occupancy(tile, limits)
        assert (o["blocks"], o["occupancy"]) == (blocks, occupancy), (device, tile, o)
    # A 2 x 2 block fills one warp with 4 of its 32 lanes.
    assert perfplots.occupancy(2, limits)["lanes_used"] == 4 / 32
    # 16 x 16 tiles: shared memory alone would allow 76 blocks on compute capability 9.0 (Q5.4).
    assert perfplots.occupancy(16, perfplots.CC90_LIMITS)["by_smem"] == 76


def test_the_reference_devices_are_the_compute_capability_the_table_assumes():
    for ds in perfdata.datasets():
        assert ds.gpu["compute_capability"] == "9.0", ds.device


def test_the_occupancy_table_names_its_device_and_the_reservation():
    html = perfplots.occupancy_table(limits=perfplots.T4_LIMITS).data
    assert "T4" in html and "16 of 32 (50%)" in html and "+ 0" in html
    assert "1,024" in perfplots.occupancy_table(limits=perfplots.CC90_LIMITS).data


def test_the_best_practices_ranking_chapter_5_states_holds_in_the_data():
    """Chapter 5 and Q5.5: at width 16 coalescedMultiply is fastest and sharedABMultiply no longer
    is; at width 32 sharedABMultiply is first and coalescedMultiply last."""
    def order(ds, tile):
        gbs = {k: ds.result(k, tile, 8192, 8192, tile).extra["gbs"] for k in perfplots.BPG_2008}   # M x N x K
        return sorted(gbs, key=lambda k: -gbs[k])
    for ds in perfdata.datasets():
        assert order(ds, 16)[0] == "coalescedMultiply", (ds.device, order(ds, 16))
        assert order(ds, 32)[0] == "sharedABMultiply" and order(ds, 32)[-1] == "coalescedMultiply", ds.device


def test_a_tile_chosen_at_run_time_costs_what_chapter_4_says():
    """Chapter 4: tiled_dynamic takes 1.3 (tile 16) to 1.4 (tile 32) times as long as tiled."""
    for ds in perfdata.datasets():
        ratios = {t: ds.ms("tiled_dynamic", t, 4096) / ds.ms("tiled", t, 4096) for t in (16, 32)}
        assert round(ratios[16], 1) == 1.3 and round(ratios[32], 1) == 1.4, (ds.device, ratios)


def test_the_roofline_numbers_chapter_5_states():
    """Chapter 5: intensity 3.99 for tiles of 16 at Width 4096 (stores included); the roof at
    cuBLAS's ~51 TFLOP/s under a nominal ~67; the tiled kernels at 60%, 48% and 27% of their
    roofs on the H200."""
    assert round(perfplots.intensity("tiled", 16, 4096), 2) == 3.99
    assert perfplots.intensity("naive", 16, 4096) < 0.25 and round(perfplots.intensity("naive", 16, 4096), 3) == 0.25
    ref = perfdata.reference()
    assert "H200" in ref.device and round(ref.ceilings["fp32_tflops"]) == 51
    assert round(perfplots.nominal_fp32_tflops(ref)) == 67
    bw, peak = ref.ceilings["copy_gbs"], ref.ceilings["fp32_tflops"]
    share = {t: ref.result("tiled", t, 4096).tflops / min(peak, bw * perfplots.intensity("tiled", t, 4096) / 1000)
             for t in (8, 16, 32)}
    assert {t: round(100 * v) for t, v in share.items()} == {8: 60, 16: 48, 32: 27}, share
