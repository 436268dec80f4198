"""What measure.bench_hopper measured of chapter 9's Hopper kernels on each GPU (model.Run of
kind "hopper"): timed on the GPU alone (--timing device: data/hopper-h100-gpu-time.json,
hopper-h200-gpu-time.json), the chapter's tables, and timed from the launch (data/hopper-h100.json,
hopper-h200.json), where the host's time to submit a launch is the point.

    from tiling_course.measure import hopperdata
    hopperdata.table(); hopperdata.plot()           # the stored GPU-time runs beside cuBLAS
    hopperdata.datasets()[0].ratio("matmul_persistent", "bf16")     # a number the chapter quotes

Each record is one kernel at one precision on one shape (M x N x K) labelled "small" (checked
against float64 NumPy), "awkward" or "square" (checked against cuBLAS and timed); what each
kernel's process recorded besides (its compile log, launch configuration, attributes, the
software it ran with) is the run's extra["kernels"], in the order run: the chapter's.
"""
import textwrap
from functools import lru_cache

import numpy as np

from .. import show
from . import model

# The runs timed on the GPU alone (bench_hopper --timing device: each launch queued behind a
# one-thread kernel, so no host time is in it): the chapter's tables and figure, H100 first.
FILES = ("hopper-h100-gpu-time.json", "hopper-h200-gpu-time.json")
# The same kernels timed from the launch (bench_hopper's default, --timing launch): the host's
# tens of microseconds to submit each launch are in the time. Only where that is the point.
LAUNCH_FILES = ("hopper-h100.json", "hopper-h200.json")
TIMINGS = {"device": FILES, "launch": LAUNCH_FILES}
TIMED = ("square", "awkward")       # the timed shapes of a run, as bench_hopper labels them


class Measured(model.View):
    """A view of one stored run of measure.bench_hopper (model.Run of kind "hopper")."""

    KIND, WHO = "hopper", "the Hopper benchmark's"

    @property
    def timing(self):
        """"device" (timed on the GPU alone) or "launch" (the host's submission in the time), as
        bench_hopper recorded it in each timed record; "launch" in a run from before it did."""
        found = {r.extra.get("timing", "launch") for r in self.run.records if r.ms is not None}
        assert len(found) <= 1, f"{self.source} mixes timings: {found}"
        return found.pop() if found else "launch"

    @property
    def label(self):
        m, sw = self.run.meta, self.run.meta.software
        how = "GPU time" if self.timing == "device" else "launch time"
        kernels = f", {m.extra['kernels']}" if m.extra.get("kernels") else ""
        return (f"{m.device}, measured {self.date}, {how} (CUDA runtime {sw['cuda_runtime']}, driver "
                f"{sw['driver']}, NVRTC {sw['nvrtc']}, CuPy {sw['cupy']}{kernels})")

    @property
    def kernels(self):
        return list(dict.fromkeys(r["kernel"] for r in self.run.extra["kernels"]))

    @property
    def precisions(self):
        return list(dict.fromkeys(r["precision"] for r in self.run.extra["kernels"]))

    def record(self, kernel, prec):
        """What `kernel`'s process at `prec` recorded besides its shapes (its compile log, launch
        configuration, attributes, versions, an error), or None where it did not run."""
        return next((r for r in self.run.extra["kernels"] if (r["kernel"], r["precision"]) == (kernel, prec)), None)

    def entries(self, kernel, prec):
        """The records of `kernel` at `prec`, one per shape, in the order run."""
        return self.run.select(kernel=kernel, precision=prec)

    def entry(self, kernel, prec, shape="square"):
        """The record of one shape ("small", "awkward", "square"), or None."""
        return next((e for e in self.entries(kernel, prec) if e.label == shape), None)

    def _timed(self, kernel, prec, shape, key):
        e = self.entry(kernel, prec, shape)
        return getattr(e, key) if e and e.ok else None

    def ratio(self, kernel, prec, shape="square"):
        """cuBLAS's time over the kernel's (above 1: faster than cuBLAS), both timed in the
        same process; None where the kernel was not timed or computed a wrong product."""
        return self._timed(kernel, prec, shape, "frac_cublas")

    def tflops(self, kernel, prec, shape="square"):
        """The kernel's TFLOP/s, 2 m n k / its median time; None as for ratio."""
        return self._timed(kernel, prec, shape, "tflops")

    def cublas_tflops(self, kernel, prec, shape="square"):
        """cuBLAS's TFLOP/s at the precision, timed beside `kernel` (each kernel's process
        times it anew, so it differs a little between kernels)."""
        e = self.entry(kernel, prec, shape)
        return e.cublas_tflops if e else None

    def host_us(self, kernel, prec, shape="square"):
        """The host's microseconds to submit the kernel's and cuBLAS's launches, or None."""
        e = self.entry(kernel, prec, shape)
        return e.extra.get("host_us") if e else None

    def shape_name(self, shape="square"):
        """The shape's name as the chapter writes it: 4096^3, 1000x1500x700 (M x N x K). (Not
        model.View.size, the width of a run whose every record is one cube.)"""
        return next(r.shape for r in self.run.records if r.label == shape).name

    def checks(self, kernel, prec):
        """(every shape's product right, the largest error in units of |M||N|, how many
        shapes were checked); a run that failed to compile, launch or finish is not right."""
        checked = [e for e in self.entries(kernel, prec) if "check" in e.extra]
        ok = bool(checked) and not (self.record(kernel, prec) or {}).get("error") and all(e.ok for e in checked)
        return ok, max((e.error for e in checked), default=None), len(checked)


@lru_cache(maxsize=None)
def datasets(timing="device"):
    """The stored runs, H100 first, of those files data/ holds: timed on the GPU alone
    (timing="device", FILES: the chapter's tables) or from the launch ("launch", LAUNCH_FILES).
    Each timed record also holds the host's microseconds to submit the kernel's and cuBLAS's
    launches (host_us)."""
    return tuple(Measured(run) for name in TIMINGS[timing] if (run := model.stored_run(name)))


def _check_text(run, kernel, prec):
    ok, error, shapes = run.checks(kernel, prec)
    if ok:
        return f"✓ {shapes} shapes, error ≤ {error:.1e}"
    problem = (run.record(kernel, prec) or {}).get("error") or "a wrong product"
    return f"✗ {problem.strip().splitlines()[-1][:60]}"


def table(data=None, gpu=None):
    """Per GPU, precision and kernel (the chapter's order): TFLOP/s and the fraction of
    cuBLAS's speed at the square and the awkward shape, cuBLAS's TFLOP/s timed beside it, and
    the kernel's correctness checks (float64 NumPy on a small shape, cuBLAS on the others).
    gpu: only the runs whose device's name holds it ("H100"), a table that fits a slide."""
    from ..perfplots import NoData
    data = [run for run in (datasets() if data is None else data) if gpu is None or gpu in run.device]
    if not data:
        return NoData("the Hopper kernels' table")

    def cell(run, kernel, prec, shape, digits):
        t, r = run.tflops(kernel, prec, shape), run.ratio(kernel, prec, shape)
        return f"{t:.{digits}f} ({r:.2f})" if t else "–"
    rows = []
    for run in data:
        for prec in run.precisions:
            for kernel in (k for k in run.kernels if run.record(k, prec)):
                cublas = [run.cublas_tflops(kernel, prec, s) for s in TIMED]
                rows.append([run.device, prec.upper(), f"<code>{kernel}</code>", cell(run, kernel, prec, "square", 0),
                             cell(run, kernel, prec, "awkward", 1),
                             " / ".join(f"{c:.{d}f}" if c else "–" for c, d in zip(cublas, (0, 1))),
                             _check_text(run, kernel, prec)])
    square, awkward = data[0].shape_name("square"), data[0].shape_name("awkward")
    header = ["GPU", "inputs", "kernel", f"{square}: TFLOP/s (of cuBLAS)", f"{awkward}: TFLOP/s (of cuBLAS)",
              "cuBLAS beside it, TFLOP/s", "checked"]
    return show.table(header, rows, "M x N x K, float accumulation, median times; checked within 2 k 2^-24 |M||N|; "
                                    + "; ".join(run.label for run in data))


def plot(data=None):
    """The fraction of cuBLAS's speed at the square shape of each kernel, in the chapter's
    order, per precision, a panel per GPU, with cuBLAS's line at 1."""
    from .. import style
    return style.styled(_plot)(datasets() if data is None else data)


def _plot(data):
    import matplotlib.pyplot as plt

    from .. import style
    from ..perfplots import NoData
    if not data:
        return NoData("the Hopper kernels' figure")
    if style.for_slides() and len(data) > 1:   # a GPU a slide: six kernels' names side by side
        return [_plot([run]) for run in data]
    # The full width even for one GPU: the title's line of software must fit.
    fig, axes = plt.subplots(1, len(data), figsize=(style.MAX_WIDTH_IN, 4.4), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, run in zip(axes[0], data):
        # Each kernel's bars (its precisions: BF16 and FP16, or TF32) side by side about its tick.
        measured = {k: [p for p in run.precisions if run.record(k, p)] for k in run.kernels}
        w = 0.8 / max(len(v) for v in measured.values())
        for i, prec in enumerate(run.precisions):
            kernels = [k for k in run.kernels if prec in measured[k]]
            x = [run.kernels.index(k) + (measured[k].index(prec) - (len(measured[k]) - 1) / 2) * w for k in kernels]
            ratios = [run.ratio(k, prec) or np.nan for k in kernels]
            bars = ax.bar(x, ratios, w, label=prec.upper(),
                          color=style.PALETTE[i], hatch=style.HATCHES[i % len(style.HATCHES)], edgecolor="white")
            for b, r in zip(bars, ratios):
                if r == r:          # not NaN: a kernel that failed has no bar and no number
                    ax.text(b.get_x() + b.get_width() / 2, r + 0.02, f"{r:.2f}", ha="center", va="bottom",
                            fontsize=9, rotation=90)
        ax.axhline(1.0, color=style.BLACK, linestyle="--", linewidth=1, label="cuBLAS")
        ax.set_xticks(range(len(run.kernels)), [k.removeprefix("matmul_").replace("_", "\n", 1) for k in run.kernels])
        ax.set_title(run.device, fontsize=10)
    axes[0][0].set_ylabel(f"fraction of cuBLAS's speed at {data[0].shape_name()}")   # its time / the kernel's
    axes[0][0].set_ylim(0, max(1.0, *(ax.get_ylim()[1] for ax in axes[0])) * 1.15)
    # Below the panels, in one row: inside them it would hide a bar's number.
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    # Each run's label wrapped to the figure's width: a longer line would widen the saved figure,
    # which the page then shrinks until its smallest text is too small to read.
    fig.suptitle("Hopper's kernels, step by step, beside cuBLAS at the same precision\n"
                 + "\n".join(textwrap.fill(run.label, 100) for run in data), fontsize=10)
    return fig
