"""The error heatmaps: errors within float32 rounding count as none, and the panels of one
figure share one colour scale, so a correct product never looks hotter than a wrong one."""
import numpy as np

from tiling_course import demos, figures


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
