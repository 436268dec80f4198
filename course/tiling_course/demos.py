"""The live demonstrations of the syncthreads and boundaries chapters: a wrong kernel
of tiling_course.corpus run in checked mode (its finding shown, never raised), and its
unchecked results on a GPU and on the CPU runtime drawn as error heatmaps."""
import textwrap

import matplotlib.pyplot as plt
import numpy as np

from cudacheck import KernelError, gpu_available

from . import corpus, figures, style


def wrap(message, width=96):
    """A finding's message wrapped for the page; quoted source lines are left whole."""
    return "\n".join(line if line.startswith("  line ") else textwrap.fill(line, width)
                     for line in message.splitlines())


def checked(name):
    """Run wrong kernel `name` in checked mode; show and return its finding."""
    from IPython.display import Markdown, display
    try:
        corpus.WRONG[name].run(backend="cpu", check=True)
    except KernelError as e:
        display(Markdown(f"**{type(e).__name__}**\n\n```text\n{wrap(str(e))}\n```"))
        return e
    display(Markdown("Checked mode found nothing."))
    return None


@style.styled
def heatmaps(name):
    """Where the unchecked wrong kernel goes wrong: on a GPU (this machine's, or the
    book's reference GPU run) and on the CPU runtime, side by side."""
    bug = corpus.WRONG[name]
    tile = bug.shape[3]
    # The inputs of the stored GPU run (scripts/record_wrong_results.py), for every panel.
    M, N, P = bug.run(backend="cpu", check=False, rng=np.random.default_rng(0))
    panels = [(P, "the CPU runtime (unchecked)")]
    if gpu_available():
        _, _, P = bug.run(backend="gpu", check=False, rng=np.random.default_rng(0))
        import cupy
        panels.insert(0, (cupy.asnumpy(P),
                          f"this GPU ({cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()})"))
    elif (stored := corpus.stored_gpu_result(name)) is not None:
        panels.insert(0, stored)
    fig, axes = plt.subplots(1, len(panels), figsize=(min(style.MAX_WIDTH_IN, 4.3 * len(panels)), 4.2),
                             layout="constrained")
    # One colour scale for all panels, so a right product never looks hotter than a wrong one.
    vmax = max(max(figures.error(P, M, N).max() for P, _ in panels), 1e-30)
    for ax, (P, where) in zip(np.atleast_1d(axes), panels):
        figures.error_heatmap(P, M, N, f"on {where}", tile=tile, ax=ax, vmax=vmax)
    fig.suptitle(f"|P - M·N| for {name}", fontsize=11)
    plt.close(fig)
    return fig
