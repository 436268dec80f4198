"""The book's teaching figures and tables. Each takes its facts from a real run (a
checked-mode trace or count), never from a hand drawing. Plots of measured speed are in
tiling_course.perfplots."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from . import show, style, traces

# Light tints of the book's colour-blind-safe palette: black text stays readable on them.
BLOCK_COLOURS = [style.tint(c, 0.45) for c in style.PALETTE[:6]]


@style.styled
def thread_map(width=6, block=4):
    """Which thread of which block computes each element of P (naive kernel), from the
    stores a checked run records."""
    report, _ = traces.record("naive", width, block)
    fig, ax = plt.subplots(figsize=(0.75 * width + 1, 0.75 * width + 1))
    for a in report.trace:
        if a.array != "P":
            continue
        row, col = traces.rc(a.index, width)
        b = a.block[0] + a.block[1] * 7
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=BLOCK_COLOURS[b % len(BLOCK_COLOURS)], edgecolor="white"))
        if style.for_slides():   # one line a cell: two lines of a slide's size do not fit 8 rows in its height
            ax.text(col + 0.5, row + 0.5, "b{},{} t{},{}".format(*a.block[:2], *a.thread[:2]),
                    ha="center", va="center", fontsize=9)
        else:
            ax.text(col + 0.5, row + 0.38, f"b{a.block[:2]}", ha="center", va="center", fontsize=9)
            ax.text(col + 0.5, row + 0.68, f"t{a.thread[:2]}", ha="center", va="center", fontsize=9)
    grid = -(-width // block)
    for i in range(grid + 1):
        ax.axhline(i * block, color="black", lw=2)
        ax.axvline(i * block, color="black", lw=2)
    ax.set_xlim(0, grid * block)
    ax.set_ylim(grid * block, 0)
    ax.add_patch(Rectangle((0, 0), width, width, fill=False, edgecolor=style.VERMILLION, lw=3))
    if style.for_slides():   # the slide's prose says the rest: the rows get the height
        ax.set_xlabel("col")
        ax.set_ylabel("row")
        ax.set_title(f"P ({width} x {width}, red frame); b0,1 t2,3 = blockIdx (0, 1), threadIdx (2, 3)", fontsize=10)
    else:
        ax.set_xlabel("col = blockIdx.x * blockDim.x + threadIdx.x")
        ax.set_ylabel("row = blockIdx.y * blockDim.y + threadIdx.y")
        ax.set_title(f"P ({width} x {width}, red frame) computed by {grid} x {grid} blocks of {block} x {block} "
                     "threads;\nb(x, y) = blockIdx, t(x, y) = threadIdx.\nThreads of the overhang (no label) return "
                     "at once.", fontsize=10)
    ax.set_xticks(range(grid * block))
    ax.set_yticks(range(grid * block))
    plt.close(fig)
    return fig


@style.styled
def tiling_idea(width=8, tile=2, out=(2, 1)):
    """The output tile `out` = (tile row, tile column) of P needs the row of tiles of M
    beside it and the column of tiles of N above it, one pair per phase."""
    ty, tx = out
    fig, axes = plt.subplots(1, 3, figsize=(8.5, 3.6), layout="constrained")
    phases = width // tile
    for ax, name in zip(axes, "MNP"):
        for i in range(width + 1):
            ax.axhline(i, color="lightgrey", lw=0.6)
            ax.axvline(i, color="lightgrey", lw=0.6)
        for i in range(0, width + 1, tile):
            ax.axhline(i, color="black", lw=1.4)
            ax.axvline(i, color="black", lw=1.4)
        ax.set_xlim(0, width)
        ax.set_ylim(width, 0)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(name, fontsize=13)
    cmap = [style.tint(style.PALETTE[p % 6], 0.6) for p in range(phases)]
    for ph in range(phases):
        axes[0].add_patch(Rectangle((ph * tile, ty * tile), tile, tile, color=cmap[ph]))
        axes[0].text(ph * tile + tile / 2, ty * tile + tile / 2, f"phase\n{ph}", ha="center", va="center",
                     fontsize=9)
        axes[1].add_patch(Rectangle((tx * tile, ph * tile), tile, tile, color=cmap[ph]))
        axes[1].text(tx * tile + tile / 2, ph * tile + tile / 2, f"phase\n{ph}", ha="center", va="center",
                     fontsize=9)
    axes[2].add_patch(Rectangle((tx * tile, ty * tile), tile, tile, color=style.VERMILLION))
    axes[2].text(tx * tile + tile / 2, ty * tile + tile / 2, "block\n" + f"({tx}, {ty})", ha="center",
                 va="center", fontsize=9, color="white")
    fig.suptitle(f"One block computes one {tile} x {tile} tile of P from a row of tiles of M and a column\n"
                 f"of tiles of N, one pair per phase ({width} x {width} matrices)", fontsize=11)
    plt.close(fig)
    return fig


def access_order(width=4, block=2):
    """The naive kernel's global loads by the threads of block (0, 0), in order."""
    report, _ = traces.record("naive", width, block, blocks=[(0, 0)])
    rows = {}
    for a in report.trace:
        if a.array in "MN" and a.op == "R":
            rows.setdefault(a.thread[:2], []).append(a)
    out = []
    for thread in sorted(rows, key=lambda t: (t[1], t[0])):
        loads = rows[thread]
        terms = [f"M<sub>{traces.rc(m.index, width)[0]},{traces.rc(m.index, width)[1]}</sub>·"
                 f"N<sub>{traces.rc(n.index, width)[0]},{traces.rc(n.index, width)[1]}</sub>"
                 for m, n in zip(loads[0::2], loads[1::2])]
        out.append([f"({thread[0]}, {thread[1]})"] + terms)
    header = ["threadIdx (x, y)"] + [f"k = {k}" for k in range(width)]
    return show.table(header, out, f"Global loads of block (0, 0), naive kernel, Width {width}: each thread reads a "
                               f"whole row of M and column of N (recorded by checked mode)")


def phase_table(width=4, tile=2, block=(0, 0)):
    """Which element each thread of one block loads into which tile slot in each phase
    of the tiled kernel, and what it then adds to its sum (recorded by checked mode)."""
    report, _ = traces.record("tiled", width, tile, blocks=[block])
    cells = {}
    for a in report.trace:
        phase = (a.interval - 1) // 2
        key = (a.thread[:2], phase)
        c = cells.setdefault(key, {"M": None, "N": None, "Mds": None, "Nds": None, "terms": []})
        if a.array in ("M", "N"):
            c[a.array] = traces.rc(a.index, width)
        elif a.op == "W":
            c[a.array] = a.index
        elif a.array == "Mds":
            c["terms"].append([a.index, None])
        elif a.array == "Nds":
            c["terms"][-1][1] = a.index
    phases = width // tile
    rows = []
    for thread in sorted({t for t, _ in cells}, key=lambda t: (t[1], t[0])):
        row = [f"({thread[0]}, {thread[1]})"]
        for ph in range(phases):
            c = cells[(thread, ph)]
            row.append(f"M<sub>{c['M'][0]},{c['M'][1]}</sub> → Mds<sub>{c['Mds'][0]},{c['Mds'][1]}</sub>")
            row.append(f"N<sub>{c['N'][0]},{c['N'][1]}</sub> → Nds<sub>{c['Nds'][0]},{c['Nds'][1]}</sub>")
            row.append("sum += " + " + ".join(f"Mds<sub>{m[0]},{m[1]}</sub>·Nds<sub>{n[0]},{n[1]}</sub>"
                                              for m, n in c["terms"]))
        rows.append(row)
    header = ["threadIdx (x, y)"] + [h for ph in range(phases) for h in
                                     (f"phase {ph}: load M", f"phase {ph}: load N", f"phase {ph}: compute")]
    return show.table(header, rows, f"Tiled kernel, Width {width}, TILE_WIDTH {tile}, block {block}: "
                                f"the loads and sums of each phase, as a checked run recorded them")


@style.styled
def edge_loads(width=6, tile=4, block=(1, 1), phase=1):
    """Near the edge: which threads of one block load a real element in one phase and
    which store a zero instead (tiled kernel with boundary checks, recorded)."""
    report, _ = traces.record("tiled_bounds", width, tile, blocks=[block])
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 4.6), layout="constrained")
    first = 1 + 2 * phase  # the interval of this phase's loads
    for ax, src, dst in ((axes[0], "M", "Mds"), (axes[1], "N", "Nds")):
        loaded = {a.thread[:2]: traces.rc(a.index, width) for a in report.trace
                  if a.array == src and a.interval == first}
        cells = [(tx, ty) for ty in range(tile) for tx in range(tile)]
        fills = [style.tint(style.SKY if c in loaded else style.ORANGE, 0.6) for c in cells]
        style.squares(ax, cells, facecolors=fills, edgecolor="black")
        for tx, ty in cells:
            real = (tx, ty) in loaded
            label = f"{src}[{loaded[(tx, ty)][0]}][{loaded[(tx, ty)][1]}]" if real else "0.0f\n(past edge)"
            ax.text(tx + 0.5, ty + 0.5, label, ha="center", va="center", fontsize=9)
        ax.set_xlim(0, tile)
        ax.set_ylim(tile, 0)
        ax.set_aspect("equal")
        ax.set_xticks(np.arange(tile) + 0.5, [str(i) for i in range(tile)])
        ax.set_yticks(np.arange(tile) + 0.5, [str(i) for i in range(tile)])
        ax.set_xlabel("threadIdx.x")
        ax.set_ylabel("threadIdx.y")
        ax.set_title(f"{dst}[ty][tx] in phase {phase}")
    fig.suptitle(f"Block {block} of a {width} x {width} product with {tile} x {tile} tiles:\nblue threads load an "
                 f"element, orange ones are past the edge and store 0", fontsize=11)
    plt.close(fig)
    return fig


def error_heatmap(P, M, N, title, tile=None, ax=None, vmax=None):
    """|P - M N| per element, with the tile grid, to show where a wrong kernel is wrong.
    Errors within float32 rounding (tryout.tolerance) count as none and are drawn as 0, so
    a correct product is a dark square. vmax: the top of the colour scale, shared by the
    panels of one figure so that none looks hotter than it is. Draws into `ax` if given;
    returns the figure."""
    err = error(P, M, N)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.2, 4.4))
        plt.close(fig)
    im = ax.imshow(err, cmap="magma", interpolation="nearest", vmin=0, vmax=vmax or max(err.max(), 1e-30))
    ax.figure.colorbar(im, ax=ax, fraction=0.046, label="|P - M·N|")
    if tile:
        for i in range(0, max(err.shape) + 1, tile):
            ax.axhline(i - 0.5, color="white", lw=0.5, alpha=0.5)
            ax.axvline(i - 0.5, color="white", lw=0.5, alpha=0.5)
    wrong = int((err > 0).sum())
    ax.set_title(f"{title}\n{wrong} of {err.size} elements wrong (max |error| {err.max():.3g})", fontsize=10)
    ax.set_xlabel("col")
    ax.set_ylabel("row")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return ax.figure


def error(P, M, N):
    """|P - M N| in float64, with errors within float32 rounding's bound set to 0."""
    from .tryout import tolerance
    err = np.abs(np.asarray(P, np.float64) - M.astype(np.float64) @ N.astype(np.float64))
    return np.where(err > tolerance(M, N), err, 0.0)


def shared_views(kernel, report):
    """The shared arrays of a recorded run as thread_work draws them: their shapes and the
    trace. A pipelined kernel (rung 6) keeps all its tiles in one dynamic array, `smem`:
    each of its STAGES stages holds the transposed slice of M (BK rows of BM + MPAD floats)
    and then the slice of N (BK rows of BN), matmul.pipeline_shared_bytes's layout at the
    source's defaults. Its accesses are given as accesses of those two views,
    Ms[STAGES][BK][BM + MPAD] and Ns[STAGES][BK][BN]."""
    from . import matmul
    if kernel not in matmul.PIPELINE_DEFAULTS or "smem" not in report.shared_shapes:
        return report.shared_shapes, report.trace
    c = matmul.PIPELINE_DEFAULTS[kernel]
    ms_cols, stage = c["BM"] + c["MPAD"], c["BK"] * (c["BM"] + c["MPAD"]) + c["BK"] * c["BN"]
    assert report.shared_shapes["smem"][0] * 4 == matmul.pipeline_shared_bytes(kernel, "fp32"), "smem's layout"
    shapes = {"Ms": (c["STAGES"], c["BK"], ms_cols), "Ns": (c["STAGES"], c["BK"], c["BN"])}

    def view(a):
        if a.array != "smem":
            return a
        s, i = divmod(a.index, stage)
        if i < c["BK"] * ms_cols:
            return a._replace(array="Ms", index=(s, i // ms_cols, i % ms_cols))
        i -= c["BK"] * ms_cols
        return a._replace(array="Ns", index=(s, i // c["BN"], i % c["BN"]))
    return shapes, [view(a) for a in report.trace]


@style.styled
def thread_work(kernel, threads=((0, 0), (1, 0)), tile=32):
    """What two threads of block (0, 0) compute and read, from a checked run of one
    block's tile of P: the elements of P each stores (left), and the shared arrays the
    block fills (right, with the elements those threads read in the first step)."""
    from . import matmul
    bm, bn = matmul.Launch(kernel).tile_of_p(tile)
    report, _ = traces.record(kernel, bm, tile, k=32, n=bn, blocks=[(0, 0)], threads=list(threads))
    colours = (style.VERMILLION, style.BLUE)
    fig, axes = plt.subplots(1, 3, figsize=(8.5, 4.2), gridspec_kw={"width_ratios": [1.3, 1, 1]},
                             layout="constrained")
    ax = axes[0]
    ax.add_patch(Rectangle((0, 0), bn, bm, facecolor="#f2f2f2", edgecolor="black"))
    outputs = {}
    for a in report.trace:
        if a.array == "P" and a.op == "W":   # a float4 store writes `width` elements from index
            outputs.setdefault(a.thread[:2], []).extend(traces.rc(a.index + w, bn) for w in range(a.width))
    for (thread, cells), colour in zip(sorted(outputs.items(), key=lambda kv: (kv[0][1], kv[0][0])), colours):
        style.squares(ax, [(col, row) for row, col in cells], facecolor=colour, edgecolor=colour)
        ax.plot([], [], "s", color=colour, label=f"thread {thread}: {len(cells)} elements of P")
    ax.set_xlim(0, bn)
    ax.set_ylim(bm, 0)
    ax.set_aspect("equal")
    ax.set_title(f"{kernel}:\nthe block's {bm} x {bn} tile of P", fontsize=10)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    shapes, trace = shared_views(kernel, report)
    shared = [n for n, shape in shapes.items() if len(shape) >= 2][:2]
    for ax, name in zip(axes[1:], shared):
        accesses = [a for a in trace if a.array == name]
        shape = shapes[name]
        cols, inner = shape[-1], shape[-2]

        def rc(index, inner=inner):  # a 3-D array (two buffers) is drawn as its 2-D slices stacked
            return (index[0] * inner if len(index) == 3 else 0) + index[-2], index[-1]
        rows = inner * (shape[0] if len(shape) == 3 else 1)
        ax.add_patch(Rectangle((0, 0), cols, rows, facecolor="#f2f2f2", edgecolor="black"))
        first = min(a.interval for a in accesses if a.op == "R")
        for thread, colour in zip(sorted(outputs, key=lambda t: (t[1], t[0])), colours):
            reads = set()
            for a in accesses:
                if a.op == "R" and a.thread[:2] == thread and a.interval == first:
                    r0, c0 = rc(a.index)
                    # a float4 read covers `width` elements along the row, carrying into the next
                    reads.update((r0 + (c0 + w) // cols, (c0 + w) % cols) for w in range(a.width))
            style.squares(ax, [(c, r) for r, c in reads], facecolor=colour, edgecolor=colour, alpha=0.6)
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)
        ax.set_aspect("equal" if max(rows, cols) <= 4 * min(rows, cols) else "auto")
        declared = "__shared__ " if name in report.shared_shapes else "smem as "
        ax.set_title(f"{declared}{name}{''.join(f'[{d}]' for d in shape)}\n(coloured: what the two\nthreads read "
                     f"in the first\nslice of k)", fontsize=9)
    for ax in axes[1 + len(shared):]:
        ax.axis("off")
    fig.suptitle("Recorded by checked mode from a run of block (0, 0)", fontsize=10)
    plt.close(fig)
    return fig
