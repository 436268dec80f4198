"""Plots and tables of measured performance. All read the package's reference data through
measure.perfdata (the benchmark's runs in the one measurement model, measure.model; a
reader's live measurement is one more Dataset), and every one names the
device, date and software of the numbers it shows. A plot or table with nothing to show
returns a NoData sentence that says so, never an empty frame."""

import matplotlib.pyplot as plt
import numpy as np

from . import show, style, traces
from .measure import perfdata

# What the CUDA C Programming Guide's table of compute capabilities gives: the per-SM
# limits that decide how many blocks of a kernel run at once. Since compute capability 8.0
# the driver also reserves 1 KB of shared memory per block.
CC90_LIMITS = {"device": "compute capability 9.0 (H100, H200)", "warps_per_sm": 64, "blocks_per_sm": 32,
               "smem_per_sm": 228 * 1024, "smem_reserved_per_block": 1024}
T4_LIMITS = {"device": "compute capability 7.5 (Colab's T4)", "warps_per_sm": 32, "blocks_per_sm": 16,
             "smem_per_sm": 64 * 1024, "smem_reserved_per_block": 0}
# FP32 multiply-adds per clock per SM, from the CUDA C Programming Guide's table of
# arithmetic instruction throughput, by compute capability.
FP32_LANES_PER_SM = {"7.5": 64, "8.0": 64, "8.6": 128, "8.9": 128, "9.0": 128}
# The Best Practices Guide's Table 1 (2008): effective bandwidth in GB/s.
BPG_2008 = {"simpleMultiply": (8.7, 0.7), "coalescedMultiply": (14.3, 8.2), "sharedABMultiply": (29.7, 15.7)}


class NoData:
    """What a plot or table shows when it has no measurements: a sentence, not an empty frame."""
    PREFIX = "No measurements to show"

    def __init__(self, what):
        self.text = (f"{self.PREFIX} in {what}: this copy of the course holds no reference GPU data for it "
                     "(tiling_course/data/*.json), and no live run was given. On a GPU, the chapter measures "
                     "one live and shows it here.")

    def __repr__(self):
        return self.text

    def _repr_markdown_(self):
        return f"*{self.text}*"


def _closed(fig):
    """The figure, closed so that a notebook shows only the returned copy (and stamped with
    its smallest font, style.finish)."""
    return style.finish(fig)


def _with_live(datasets, live):
    datasets = list(datasets if datasets is not None else perfdata.datasets())
    return datasets + ([live] if live is not None else [])


def _device(ds):
    return ds.device + (" (live)" if ds.source == "live" else "")


def _name(kernel, tile):
    return "cuBLAS" if kernel == "cublas" else f"{kernel} {tile}"


def _title(fig, datasets, what):
    """The figure's title, with the device, date and software of every dataset shown."""
    fig.suptitle(what + "\n" + "\n".join(ds.label for ds in datasets), fontsize=10)


def _facets(rows, cols, width=style.MAX_WIDTH_IN, row_height=3.1, **kw):
    """A grid of panels sharing both axes, so that panels compare at a glance."""
    fig, axes = plt.subplots(rows, cols, figsize=(min(width, 1.5 + 3.6 * cols), 1.6 + row_height * rows),
                             sharex=True, sharey=True, squeeze=False, layout="constrained", **kw)
    return fig, axes


def _groups(items, most=4):
    """items cut, in order, into the fewest runs of at most `most`, as even as can be."""
    n = max(1, -(-len(items) // most))
    size = -(-len(items) // n)
    return [items[i:i + size] for i in range(0, len(items), size)]


@style.styled
def speedup_plot(datasets=None, live=None, tiles=(8, 16, 32)):
    """The lecture's speed-up, time untiled / time tiled, against Width: one panel per
    dataset (device; a reader's live run is one more), one line per tile size."""
    datasets = _with_live(datasets, live)
    fig, axes = _facets(1, max(1, len(datasets)))
    drawn = 0
    for ax, ds in zip(axes[0], datasets):
        for ti, tile in enumerate(tiles):
            widths = [w for w in ds.sizes("tiled", tile) if ds.speedup(tile, w)]
            drawn += len(widths)
            if widths:
                ax.plot(widths, [ds.speedup(tile, w) for w in widths], label=f"TILE {tile}", **style.series(ti))
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_title(_device(ds))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("Width")
    if not drawn:
        plt.close(fig)
        return NoData("the speed-up plot")
    axes[0][0].set_ylabel("speed-up = time untiled / time tiled")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels)))
    _title(fig, datasets, "Speed-up of the tiled kernel over the naive one (same block size)")
    return _closed(fig)


@style.styled
def time_plot(kernels_and_tiles, datasets=None, live=None, metric="ms"):
    """Time (metric="ms") or TFLOP/s (metric="tflops") against Width for (kernel, tile)
    pairs, cuBLAS included as ("cublas", None): one column of panels per dataset, and the
    kernels cut into rows of at most four, each beside cuBLAS, so no panel has more than
    five lines. A kernel keeps its colour and marker in every panel."""
    datasets = _with_live(datasets, live)
    kernels = list(kernels_and_tiles)
    others = [kt for kt in kernels if kt[0] != "cublas"]
    reference = [kt for kt in kernels if kt[0] == "cublas"]
    rows = _groups(others) if others else [[]]
    fig, axes = _facets(len(rows), max(1, len(datasets)), row_height=2.8)
    drawn = 0
    for r, group in enumerate(rows):
        for c, ds in enumerate(datasets):
            ax = axes[r][c]
            for kernel, tile in group + reference:
                widths = ds.sizes(kernel, tile)
                drawn += len(widths)
                if widths:
                    ys = [getattr(ds.result(kernel, tile, w), metric) for w in widths]
                    look = style.series(kernels.index((kernel, tile)))
                    if kernel == "cublas":
                        look.update(color=style.BLACK, linestyle=":")
                    ax.plot(widths, ys, label=_name(kernel, tile), **look)
            if r == 0:
                ax.set_title(_device(ds))
            if r == len(rows) - 1:
                ax.set_xlabel("Width (square matrices)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        if axes[r][0].get_legend_handles_labels()[0]:
            axes[r][0].legend(loc="upper left" if metric == "ms" else "lower right", fontsize=9)
    if not drawn:
        plt.close(fig)
        return NoData("the time plot" if metric == "ms" else "the throughput plot")
    fig.supylabel("time per product (ms, median)" if metric == "ms" else "TFLOP/s (2·Width³ / time)", fontsize=10)
    _title(fig, datasets, "Time" if metric == "ms" else "Throughput")
    return _closed(fig)


@style.styled
def cublas_fraction(kernels_and_tiles, width=4096, datasets=None, live=None):
    """Each kernel's speed as a fraction of cuBLAS at one Width, one bar per dataset."""
    datasets = _with_live(datasets, live)
    fig, ax = plt.subplots(figsize=(8, 4.4), layout="constrained")
    x = np.arange(len(kernels_and_tiles))
    w = 0.8 / max(1, len(datasets))
    drawn = 0
    for di, ds in enumerate(datasets):
        fracs = [getattr(ds.result(k, t, width), "frac_cublas", None) or 0 for k, t in kernels_and_tiles]
        drawn += sum(f > 0 for f in fracs)
        bars = ax.bar(x + di * w, fracs, w, label=_device(ds), color=style.PALETTE[di % len(style.PALETTE)],
                      hatch=style.HATCHES[di % len(style.HATCHES)], edgecolor="white")
        for b, f in zip(bars, fracs):
            ax.text(b.get_x() + b.get_width() / 2, f + 0.005, f"{f:.2f}", ha="center", va="bottom", fontsize=9,
                    rotation=90 if len(datasets) > 1 else 0)
    if not drawn:
        plt.close(fig)
        return NoData("the fraction-of-cuBLAS plot")
    ax.set_xticks(x + w * (len(datasets) - 1) / 2, [_name(k, t).replace(" ", "\n", 1) for k, t in kernels_and_tiles])
    ax.set_ylabel("fraction of cuBLAS speed")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    ax.legend()
    _title(fig, datasets, f"Fraction of cuBLAS at Width {width} (cuBLAS time / kernel time)")
    return _closed(fig)


def intensity(kernel, tile, width=4096, counted_at=64):
    """FLOPs per byte of global memory traffic the kernel requests at `width`, from
    checked mode's counts of a run at `counted_at`: in these kernels loads grow as
    Width³ and stores as Width², so the counts scale exactly."""
    r = traces.counts(kernel, counted_at, tile)
    scale = width / counted_at
    return 2 * width ** 3 / (4 * (r.global_loads * scale ** 3 + r.global_stores * scale ** 2))


def nominal_fp32_tflops(ds):
    """The device's nominal FP32 peak: SMs x FP32 lanes x 2 FLOP x clock; None if unknown."""
    dev = ds.gpu
    lanes = FP32_LANES_PER_SM.get(dev.get("compute_capability"))
    if not (lanes and dev.get("sm_count") and dev.get("clock_mhz")):
        return None
    return dev["sm_count"] * lanes * 2 * dev["clock_mhz"] / 1e6


@style.styled
def roofline(kernels_and_tiles, width=4096, dataset=None, live=None):
    """Measured TFLOP/s against arithmetic intensity (from counted global accesses),
    under the device's measured ceilings: copy bandwidth and cuBLAS's FP32 rate."""
    ds = dataset or perfdata.reference() or live
    if ds is None or not {"copy_gbs", "fp32_tflops"} <= set(ds.ceilings):
        return NoData("the roofline (it needs a device's measured bandwidth and FP32 ceilings)")
    sets = [ds] + ([live] if live is not None and live is not ds else [])
    bw, peak = ds.ceilings["copy_gbs"], ds.ceilings["fp32_tflops"]
    fig, ax = plt.subplots(figsize=(8, 6), layout="constrained")
    drawn = 0
    xs = np.logspace(-2, 3, 200)
    ax.plot(xs, np.minimum(peak, bw * xs / 1000), color=style.BLACK, lw=1.5, marker="",
            label=f"roof: min({peak:.1f} TFLOP/s, cuBLAS's best;\n{bw:,.0f} GB/s copy x intensity)")
    nominal = nominal_fp32_tflops(ds)
    if nominal:
        ax.axhline(nominal, color="grey", lw=1, ls=":", label=f"nominal FP32 peak, {nominal:.1f} TFLOP/s")
    for ki, (kernel, tile) in enumerate(kernels_and_tiles):
        ai = intensity(kernel, tile, width)
        for s in sets:
            r = s.result(kernel, tile, width)
            drawn += bool(r)
            if r:
                look = style.series(ki)
                ax.scatter([ai], [r.tflops], color=look["color"], marker=look["marker"] if s.source != "live"
                           else "x", s=60, zorder=3,
                           label=f"{_name(kernel, tile)}: {ai:.2f} FLOP/B, {r.tflops:.1f} TFLOP/s"
                                 + (" (live)" if s.source == "live" else ""))
    if not drawn:
        plt.close(fig)
        return NoData("the roofline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per byte requested from global memory (checked mode's counts)")
    ax.set_ylabel("TFLOP/s")
    fig.legend(loc="outside lower center", ncols=2)
    _title(fig, sets, f"Roofline at Width {width}")
    return _closed(fig)


def device_limits():
    """The limits of the GPU in use (read from its attributes), or None without one."""
    from cudacheck import gpu_available
    if not gpu_available():
        return None
    import cupy
    dev = cupy.cuda.Device()
    attrs, props = dev.attributes, cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {"device": f"{name} (compute capability {props['major']}.{props['minor']}, the GPU in use)",
            "warps_per_sm": attrs["MaxThreadsPerMultiProcessor"] // 32,
            "blocks_per_sm": attrs["MaxBlocksPerMultiprocessor"],
            "smem_per_sm": attrs["MaxSharedMemoryPerMultiprocessor"],
            "smem_reserved_per_block": attrs.get("ReservedSharedMemoryPerBlock", 0)}


def occupancy(tile, limits):
    """Blocks of tile x tile threads (two float tiles of shared memory each) that fit on one
    SM, by each limit, and the occupancy: resident warps over the SM's maximum. A block
    takes whole warps, so a block of 4 threads holds a warp with 28 lanes idle."""
    threads, smem = tile * tile, 2 * tile * tile * 4
    warps = -(-threads // 32)
    by_warps = limits["warps_per_sm"] // warps
    by_smem = limits["smem_per_sm"] // (smem + limits["smem_reserved_per_block"])
    blocks = min(by_warps, limits["blocks_per_sm"], by_smem)
    return {"threads": threads, "warps": warps, "smem": smem, "by_warps": by_warps, "by_smem": by_smem,
            "blocks": blocks, "occupancy": blocks * warps / limits["warps_per_sm"],
            "lanes_used": threads / (32 * warps)}


def occupancy_table(tiles=(2, 4, 8, 16, 32), limits=None):
    """For each square tile: threads, warps and shared memory per block (with the driver's
    reservation), how many blocks fit on one SM by each limit, and the occupancy in warps.
    limits: a dict as CC90_LIMITS; default the GPU in use, else compute capability 9.0."""
    limits = limits or device_limits() or CC90_LIMITS
    reserved = limits["smem_reserved_per_block"]
    rows = []
    for t in tiles:
        o = occupancy(t, limits)
        rows.append([f"{t} x {t}", f"{o['threads']} ({o['warps']} warp{'s' if o['warps'] > 1 else ''}, "
                     f"{100 * o['lanes_used']:.0f}% of lanes)", f"{o['smem']:,} + {reserved:,}", o["by_warps"],
                     limits["blocks_per_sm"], o["by_smem"], o["blocks"],
                     f"{o['blocks'] * o['warps']} of {limits['warps_per_sm']} ({100 * o['occupancy']:.0f}%)"])
    rows.append(["64 x 64", "4096", "32,768", "–", "–", "–", "0", "cannot launch: 4096 > 1024 threads per block"])
    header = ["tile", "threads/block", "shared B/block (+ reserved)", "blocks/SM by warps", "by block limit",
              "by shared memory", "blocks/SM", "warps/SM (occupancy)"]
    return show.table(header, rows, f"Blocks that fit on one SM of {limits['device']}, by limit; registers can "
                                     "lower these further")


def bpg_table(dataset=None, width=8192, tile=16):
    """The Best Practices Guide's Table 1, effective bandwidth of its three kernels on the
    Guide's GPUs and now (measured), for A (width x tile) times B (tile x width)."""
    sets = [dataset] if dataset else perfdata.datasets()
    if not sets:
        return NoData("the Best Practices Guide's table, measured now")
    rows = []
    for kernel, (gtx280, g8800) in BPG_2008.items():
        row = [kernel, gtx280, g8800]
        for ds in sets:
            r = ds.result(kernel, tile, width, width, tile)      # M x N x K: width x width x tile
            row.append(f"{r.extra['gbs']:,.0f}" if r else "–")
        rows.append(row)
    # the GPUs' release years: the Guide's table gives no date of its own
    header = ["kernel", "GTX 280 (2008)", "8800 GTX (2006)"] + [f"{ds.device} ({ds.date})" for ds in sets]
    return show.table(header, rows, f"Effective bandwidth in GB/s, 4·(mk + kn + mn) bytes / time, "
                                     f"A {width} x {tile} times B {tile} x {width}; the first two columns are the "
                                     "Guide's figures")


LADDER = ["tiled", "ladder1_coarsened", "ladder2_regtile1d", "ladder3_regtile2d", "ladder4_vectorized",
          "ladder5_warptiled"]


# The tile the ladder was measured with: the tiled kernel's best; the rungs ignore it
# (their tiles are compiled in) but are filed under it by the benchmark.
LADDER_TILE = 32


@style.styled
def ladder_plot(width=4096, datasets=None, live=None):
    """TFLOP/s of each rung at one Width beside cuBLAS, per dataset."""
    datasets = _with_live(datasets, live)
    fig, ax = plt.subplots(figsize=(8.5, 4.6), layout="constrained")
    x = np.arange(len(LADDER) + 1)
    w = 0.8 / max(1, len(datasets))
    drawn = 0
    for di, ds in enumerate(datasets):
        rates = [getattr(ds.result(k, LADDER_TILE, width), "tflops", None) or 0 for k in LADDER]
        rates.append(getattr(ds.result("cublas", None, width), "tflops", None) or 0)
        drawn += sum(r > 0 for r in rates)
        bars = ax.bar(x + di * w, rates, w, label=_device(ds), color=style.PALETTE[di % len(style.PALETTE)],
                      hatch=style.HATCHES[di % len(style.HATCHES)], edgecolor="white")
        for b, r in zip(bars, rates):
            if r:
                ax.text(b.get_x() + b.get_width() / 2, r + 0.5, f"{r:.1f}", ha="center", va="bottom", fontsize=9,
                        rotation=90 if len(datasets) > 1 else 0)
    if not drawn:
        plt.close(fig)
        return NoData("the ladder plot")
    labels = ["tiled 32"] + [f"rung {i}\n{k.split('_', 1)[1]}" for i, k in enumerate(LADDER[1:], 1)] + ["cuBLAS"]
    ax.set_xticks(x + w * (len(datasets) - 1) / 2, labels)
    ax.set_ylabel(f"TFLOP/s at Width {width}")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    ax.legend(loc="upper left")
    _title(fig, datasets, "The ladder: FP32 throughput of each rung beside cuBLAS SGEMM")
    return _closed(fig)


def ladder_table(width=4096, datasets=None, live=None):
    """TFLOP/s and fraction of cuBLAS of each rung, one column pair per dataset."""
    datasets = _with_live(datasets, live)
    if not datasets:
        return NoData("the ladder's table")
    rows = []
    for k in LADDER + ["cublas"]:
        row = [_name(k, 32 if k == "tiled" else None).replace(" None", "")]
        for ds in datasets:
            r = ds.result(k, None if k == "cublas" else LADDER_TILE, width)
            row += [f"{r.tflops:.1f}", f"{r.frac_cublas:.2f}"] if r else ["–", "–"]
        rows.append(row)
    header = ["kernel"] + [h for ds in datasets for h in (f"TFLOP/s, {ds.device}", "of cuBLAS")]
    return show.table(header, rows, f"Width {width}: " + "; ".join(ds.label for ds in datasets))
