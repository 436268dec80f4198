"""What the tuner (measure.tune) measured on each GPU (data/tuning-*.json, model.Run of kind
"tuning"): every configuration of rungs 5 and 6 and of the tensor-core kernels it compiled and
timed at 4096^3, each beside cuBLAS at the same precision in the same run; and the FP32 gap
(measure.fp32_gap: data/fp32-gap-*.json, kind "fp32-gap"). Chapter 6's rung 6 and chapter 8
draw their tables and figure from it.

    from tiling_course.measure import tuning
    tuning.rung6_table()            # rung 5 (book's tiles, best tiles), rung 6, cuBLAS FP32
    tuning.tensor_core_table()      # per precision: wmma kernels and cuBLAS
    tuning.tensor_core_plot()
    tuning.fp32_gap_table()         # Nsight Compute: the best rung 5 beside cuBLAS's SGEMM kernel
"""
import re
from functools import lru_cache

import numpy as np

from .. import show, style
from ..perfplots import NoData
from . import model

# Rung 5's configuration as the book ships it (kernels/ladder5_warptiled.cu's defaults).
RUNG5_BOOK = {"BM": 128, "BN": 128, "WM": 32, "WN": 64, "WNITER": 2, "MINBLOCKS": 2, "BK": 16}
PRECISION_NAMES = {"fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16"}


def _label(meta):
    """Device, date and the software, as the tables' captions name them."""
    sw = meta.software
    nvcc = re.search(r"release ([\d.]+)", sw.get("nvcc") or "")
    tools = f"CUDA runtime {sw['cuda_runtime']}" + (f", nvcc {nvcc[1]}" if nvcc else "")
    return f"{meta.device}, measured {meta.date} ({tools}, CuPy {sw['cupy']})"


class Tuning(model.View):
    """A view of one tuning run (model.Run of kind "tuning"): its records by kernel, precision
    and configuration, all at one cube (size^3)."""

    KIND, WHO = "tuning", "the tuner's"

    @property
    def label(self):
        return _label(self.run.meta)

    def best(self, kernel, precision="fp32"):
        """The fastest correct configuration's record (by fraction of cuBLAS), or None."""
        good = [r for r in self.run.records if r.kernel == kernel and r.precision == precision and r.ok]
        return max(good, key=lambda r: r.frac_cublas, default=None)

    def config(self, kernel, config, precision="fp32"):
        """The record of one configuration, or None."""
        return next((r for r in self.run.records if r.kernel == kernel and r.precision == precision
                     and r.ok and r.config == config), None)

    def searched(self, kernel):
        """How many configurations of `kernel` were compiled, and how many ran correct."""
        rs = [r for r in self.run.records if r.kernel == kernel]
        return len(rs), sum(r.ok for r in rs)


@lru_cache(maxsize=1)
def tunings():
    """Every stored tuning run, H100 first (read once: the chapters draw three views of it)."""
    return tuple(Tuning(run) for run in model.stored("tuning"))


def config_text(c):
    """A configuration in brief: block tile / warp tile, the slice of k, the stages."""
    k = f", BK {c['BK']}" if "BK" in c else (f", {c['BK_BYTES']} B of k" if "BK_BYTES" in c else "")
    stages = f", {c['STAGES']} stages" if "STAGES" in c else ""
    return f"{c['BM']}x{c['BN']} / {c['WM']}x{c['WN']}{k}{stages}"


def rung6_table(data=None):
    """Rung 5 with the book's tiles and with the best tiles the tuner found, rung 6 with its
    best, and cuBLAS FP32 (timed beside each): TFLOP/s and fraction of cuBLAS per GPU, and
    the tiles (block / warp) each GPU's best used."""
    data = tunings() if data is None else data
    if not data:
        return NoData("rung 6's table")
    rows = []
    for title, pick in [("rung 5, the book's tiles", lambda t: t.config("ladder5_warptiled", RUNG5_BOOK)),
                        ("rung 5, the best tiles found", lambda t: t.best("ladder5_warptiled")),
                        ("rung 6, the best tiles found", lambda t: t.best("ladder6_pipelined"))]:
        found = [pick(t) for t in data]
        tiles = list(dict.fromkeys(config_text(r.config) for r in found if r))
        row = [title, " or ".join(tiles)]
        for r in found:
            row += [f"{r.tflops:.1f}", f"{r.frac_cublas:.3f}"] if r else ["–", "–"]
        rows.append(row)
    row = ["cuBLAS SGEMM (TF32 off)", ""]
    for t in data:
        r = t.best("ladder5_warptiled")
        row += [f"{r.cublas_tflops:.1f}", "1"] if r else ["–", "–"]
    rows.append(row)
    header = ["kernel", "tiles (block / warp)"] + [h for t in data for h in (f"TFLOP/s, {t.device}", "of cuBLAS")]
    return show.table(header, rows, f"FP32 at {data[0].size}^3: " + "; ".join(t.label for t in data))


def _tensor_rows(t):
    """(precision, tiled record, pipelined record) for each precision measured on t."""
    return [(p, t.best("wmma_tiled", p), t.best("wmma_pipelined", p)) for p in ("fp16", "bf16", "tf32")]


def tensor_core_table(data=None):
    """Per GPU and precision: the tiled and the pipelined wmma kernels and cuBLAS at the
    same precision, in TFLOP/s and as a fraction of cuBLAS."""
    data = tunings() if data is None else data
    if not data:
        return NoData("the tensor-core table")
    rows = []
    for t in data:
        for p, tiled, piped in _tensor_rows(t):
            ref = piped or tiled
            rows.append([t.device, PRECISION_NAMES[p],
                         f"{tiled.tflops:.0f} ({tiled.frac_cublas:.2f})" if tiled else "–",
                         f"{piped.tflops:.0f} ({piped.frac_cublas:.2f})" if piped else "–",
                         f"{ref.cublas_tflops:.0f}" if ref else "–",
                         config_text(piped.config) if piped else ""])
        fp32 = t.best("ladder5_warptiled")
        if fp32:
            rows.append([t.device, "FP32 (SIMT)", "", f"{fp32.tflops:.0f} (rung 5)", f"{fp32.cublas_tflops:.0f}",
                         "no tensor cores"])
    header = ["GPU", "inputs", "wmma tiled, TFLOP/s (of cuBLAS)", "wmma pipelined", "cuBLAS, TFLOP/s",
              "pipelined tiles (block / warp)"]
    return show.table(header, rows, f"{data[0].size}^3, float accumulation; " + "; ".join(t.label for t in data))


@style.styled
def tensor_core_plot(data=None):
    """TFLOP/s of the two wmma kernels and of cuBLAS at each precision, a panel per GPU,
    with FP32 (rung 5 and cuBLAS SGEMM) for scale."""
    import matplotlib.pyplot as plt
    data = tunings() if data is None else data
    if not data:
        return NoData("the tensor-core figure")
    fig, axes = plt.subplots(1, len(data), figsize=(min(style.MAX_WIDTH_IN, 1.5 + 4.2 * len(data)), 4.4),
                             sharey=True, squeeze=False, layout="constrained")
    groups = ["FP32", "TF32", "FP16", "BF16"]
    x = np.arange(len(groups))
    w = 0.27
    for ax, t in zip(axes[0], data):
        fp32 = t.best("ladder5_warptiled")
        series = {"our kernel: rung 5 / wmma tiled": [fp32.tflops if fp32 else 0],
                  "wmma pipelined": [0], "cuBLAS": [fp32.cublas_tflops if fp32 else 0]}
        for p in ("tf32", "fp16", "bf16"):
            tiled, piped = t.best("wmma_tiled", p), t.best("wmma_pipelined", p)
            series["our kernel: rung 5 / wmma tiled"].append(tiled.tflops if tiled else 0)
            series["wmma pipelined"].append(piped.tflops if piped else 0)
            ref = piped or tiled
            series["cuBLAS"].append(ref.cublas_tflops if ref else 0)
        for i, (name, rates) in enumerate(series.items()):
            bars = ax.bar(x + (i - 1) * w, rates, w, label=name, color=style.PALETTE[i],
                          hatch=style.HATCHES[i % len(style.HATCHES)], edgecolor="white")
            for b, r in zip(bars, rates):
                if r:
                    ax.text(b.get_x() + b.get_width() / 2, r + 8, f"{r:.0f}", ha="center", va="bottom",
                            fontsize=9, rotation=90)
        ax.set_xticks(x, groups)
        ax.set_title(t.device, fontsize=10)
        ax.set_xlabel("inputs (products accumulate in float)")
    axes[0][0].set_ylabel(f"TFLOP/s at {data[0].size}^3")
    top = max(ax.get_ylim()[1] for ax in axes[0])
    axes[0][0].set_ylim(0, top * 1.18)
    axes[0][0].legend(loc="upper left", fontsize=9)
    fig.suptitle("Tensor cores: the tiled kernel with wmma fragments, beside cuBLAS at each precision\n"
                 + "\n".join(t.label for t in data), fontsize=10)
    return fig


# The counters of the FP32 gap (data/fp32-gap-*.json, measure.fp32_gap) that chapter 6 shows:
# (metric, row label, scale, format).
GAP_ROWS = [
    ("gpu__time_duration.sum", "time, ms", 1e-6, "{:.3f}"),
    ("sm__cycles_elapsed.avg.per_second", "SM clock, GHz", 1e-9, "{:.2f}"),
    ("launch__grid_size", "blocks of 256 threads", 1, "{:.0f}"),
    ("launch__registers_per_thread", "registers per thread", 1, "{:.0f}"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "FFMAs (billions, thread)", 1e-9, "{:.1f}"),
    ("smsp__inst_executed.sum", "instructions (millions, warp)", 1e-6, "{:,.0f}"),
    ("smsp__inst_executed_op_shared_ld.sum", "shared loads (millions, warp)", 1e-6, "{:.1f}"),
    ("smsp__inst_executed_op_shared_st.sum", "shared stores (millions, warp)", 1e-6, "{:.2f}"),
    ("smsp__inst_executed_op_global_ld.sum", "global loads (millions, warp)", 1e-6, "{:.3f}"),
    ("smsp__issue_active.avg.pct_of_peak_sustained_active", "cycles with an instruction issued, %", 1, "{:.1f}"),
    ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "FMA pipe busy, % of peak", 1, "{:.1f}"),
    ("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "stall: wait (per issue)", 1, "{:.2f}"),
    ("smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio", "stall: dispatch (per issue)", 1,
     "{:.2f}"),
    ("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio", "stall: shared memory (per issue)",
     1, "{:.2f}"),
]


class Gap(model.View):
    """A view of one FP32-gap run (model.Run of kind "fp32-gap"): the sweep's records, the best
    configuration, and Nsight Compute's counters of it ("rung5") and of cuBLAS's kernel ("cublas")."""

    KIND, WHO = "fp32-gap", "the FP32 gap's"

    @property
    def best(self):
        """The record of the sweep's best configuration."""
        return next(r for r in self.run.records if r.config == self.run.extra["best"])

    @property
    def profiles(self):
        return self.run.extra["profiles"]


@lru_cache(maxsize=1)
def fp32_gaps():
    """Each stored FP32-gap run (measure.fp32_gap), H100 first."""
    return tuple(Gap(run) for run in model.stored("fp32-gap"))


def gap_value(run, who, metric):
    """One counter of one run: who is "rung5" or "cublas"."""
    return run.profiles[who]["metrics"][metric]


NCU_VERSION = re.compile(r"Version ([\d.]+)")


KERNEL_SHAPE = re.compile(r"tilesize(\d+)x(\d+)x(\d+)_stage(\d+)_warpsize(\d+)x(\d+)x\d+")


def _short(kernel):
    """cuBLAS's kernel in words a phone can wrap: its family and the tile, stages and warps its
    name encodes (the whole name is one word of some 120 characters)."""
    shape = KERNEL_SHAPE.search(kernel)
    if not shape:   # a kernel of another naming scheme: its name as it is
        return kernel
    m, n, k, stages, wm, wn = shape.groups()
    return (f"{'_'.join(kernel.split('_')[:3])} (its name: tiles {m} x {n}, slices of {k}, {stages} stages, "
            f"{wm} x {wn} warps)")


def fp32_gap_table(data=None):
    """Nsight Compute's counters of the best rung 5 and of cuBLAS's SGEMM kernel at 4096^3, a
    column pair per GPU, with the sweep's best and cuBLAS's kernel named in the caption."""
    data = fp32_gaps() if data is None else data
    if not data:
        return NoData("the FP32 gap's table")
    rows = [[label] + [fmt.format(gap_value(run, who, metric) * scale) for run in data for who in ("rung5", "cublas")]
            for metric, label, scale, fmt in GAP_ROWS]
    header = ["counter"] + [h for run in data for h in (f"rung 5, {run.device}", "cuBLAS")]
    kernels = "; ".join(f"{run.device}: cuBLAS's kernel {_short(run.profiles['cublas']['kernel'])}, "
                        f"rung 5 {config_text(run.best.config)} at {run.best.frac_cublas:.2f} of it"
                        for run in data)
    labels = "; ".join(f"{run.meta.date}, CUDA runtime {run.meta.software['cuda_runtime']}, Nsight Compute "
                       f"{NCU_VERSION.search(run.meta.software['ncu'])[1]}" for run in data)
    return show.table(header, rows, f"FP32 at {data[0].size}^3, one launch each under Nsight Compute "
                      f"(clocks as they are). {kernels}. Measured {labels}.")
