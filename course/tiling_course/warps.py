"""Warps, and how their accesses reach memory, read from checked-mode traces.

A block's threads are numbered with threadIdx.x fastest, then y, then z, and cut into
warps of 32 consecutive numbers (the CUDA C Programming Guide, "SIMT Architecture"). A
warp issues each load or store once for its 32 threads, its lanes, so what an access
costs depends on where the lanes' addresses lie:

* global memory is moved in 32-byte sectors: a warp's request costs as many sectors as
  its lanes' bytes touch. It is *coalesced* when neighbouring lanes touch neighbouring
  addresses, or the same one: then few sectors are fetched and all their bytes are used.
* shared memory is cut into 32 banks of 4-byte words, word w in bank w % 32; each bank
  delivers one word per pass, so a request takes as many passes as the most distinct
  words one bank must deliver. Lanes reading the same word share it (a broadcast). An
  8-byte access is served per half-warp and a 16-byte one per quarter-warp, each part
  as a request of its own.

`requests(report)` groups the accesses of a traced launch (tiling_course.traces) into
warp requests: those of one source line to one array that the lanes of one warp make
the i-th time they run that line. The book's kernels use float (4-byte) arrays; the
element size is a parameter for others.
"""
import html
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np

from . import matmul, show, style

WARP = 32       # threads per warp, every NVIDIA GPU so far
SECTOR = 32     # bytes: the unit in which L1 and L2 move global memory
BANKS = 32      # shared-memory banks, each 4 bytes wide (compute capability 5.0 and later)
WORD = 4


def warp_of(thread, block):
    """(warp, lane) of thread (x, y, z) in a block of `block` = (bx, by, bz) threads."""
    x, y, z = (tuple(thread) + (0, 0))[:3]
    bx, by = block[0], block[1]
    linear = x + bx * (y + by * z)
    return divmod(linear, WARP)


@dataclass(frozen=True)
class Request:
    """One access of one warp: a line's load or store of one array, the step-th time the
    lanes ran it. `lanes` holds (lane, first element, elements) for each lane that took
    part; elements are flat (row-major) indices into the array."""
    block: tuple
    warp: int
    line: int
    array: str
    op: str            # "R" or "W"
    step: int
    space: str         # "global" or "shared"
    lanes: tuple
    element_bytes: int = 4

    @cached_property
    def elements(self):
        """The distinct elements the request touches, sorted."""
        return sorted({e for _, first, n in self.lanes for e in range(first, first + n)})

    @property
    def bytes_used(self):
        return len(self.elements) * self.element_bytes

    @cached_property
    def sectors(self):
        """The 32-byte sectors its lanes' bytes fall in (global memory)."""
        b = self.element_bytes
        return len({byte // SECTOR for _, first, n in self.lanes
                    for byte in range(first * b, (first + n) * b, min(b, SECTOR))})

    @property
    def efficiency(self):
        """Bytes used over bytes moved: 1.0 when every byte of every sector is used."""
        return self.bytes_used / (self.sectors * SECTOR)

    @property
    def _lanes_per_part(self):
        # Accesses of up to 4 bytes are served for all 32 lanes at once, 8-byte ones per
        # half-warp, 16-byte ones per quarter-warp.
        width = max(n for _, _, n in self.lanes) * self.element_bytes   # bytes per lane
        return WARP // max(1, -(-width // WORD))

    @cached_property
    def banks(self):
        """Shared memory: for each part of the warp served together, {bank: {word: the
        first lane that needs it}}; words count from the array's start."""
        parts = defaultdict(lambda: defaultdict(dict))
        for lane, first, n in self.lanes:
            start, stop = first * self.element_bytes // WORD, -(-(first + n) * self.element_bytes // WORD)
            for word in range(start, stop):
                parts[lane // self._lanes_per_part][word % BANKS].setdefault(word, lane)
        return list(parts.values())

    @property
    def passes(self):
        """Passes through the banks: for each part of the warp served together, the most
        distinct words one bank must deliver; summed over the parts."""
        return sum(max(len(words) for words in part.values()) for part in self.banks)

    @property
    def ideal_passes(self):
        """The passes of the same request without a conflict: one per part."""
        return len(self.banks)

    @property
    def conflict(self):
        """How many times the passes exceed the ideal (1: no bank conflict)."""
        return self.passes / self.ideal_passes


def _flat(index, shape):
    """A trace index (an int, or a tuple for a shared array of several dimensions) as a
    flat row-major index."""
    if not isinstance(index, tuple):
        return int(index)
    flat = 0
    for i, dim in zip(index, tuple(shape)[-len(index):] if shape else (1,) * len(index)):
        flat = flat * dim + int(i)
    return flat


def requests(report, element_bytes=4):
    """The warp requests of a traced launch (a cudacheck LaunchReport with a trace), in
    the order their first lane ran them."""
    shared = report.shared_shapes or {}
    steps = defaultdict(int)          # (thread, line, array, op) -> times seen
    grouped = {}
    for a in report.trace or ():
        key = (a.block, a.thread, a.line, a.array, a.op)
        step = steps[key]
        steps[key] += 1
        warp, lane = warp_of(a.thread, report.block)
        group = (a.block, warp, a.line, a.array, a.op, step)
        first = _flat(a.index, shared.get(a.array))
        grouped.setdefault(group, []).append((lane, first, a.width))
    return [Request(block, warp, line, array, op, step, "shared" if array in shared else "global",
                    tuple(sorted(lanes)), element_bytes)
            for (block, warp, line, array, op, step), lanes in grouped.items()]


def record(kernel, tile, m, k=None, n=None, code=None, launch=None, block=(0, 0), seed=0):
    """Run a kernel of the book (or `code`, a reader's kernel of the same form) in checked
    mode on random m x k times k x n inputs, tracing one block; returns its LaunchReport."""
    k, n = k or m, n or m
    rng = np.random.default_rng(seed)
    M = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    N = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    return matmul.run_checked(M, N, kernel, tile, code=code, launch=launch, trace=[block])[1]


# --------------------------------------------------------------------------- display

def _runs(elements, columns):
    """Elements (flat indices into a matrix of `columns` columns) as short text: runs of a
    row ('[3][0..15]'), runs down a column ('[0..31][2]') or a list."""
    if not elements:
        return ""
    rc = [divmod(e, columns) for e in elements]
    if len(rc) == 1:
        return f"[{rc[0][0]}][{rc[0][1]}]"
    rows = sorted({r for r, _ in rc})
    cols = sorted({c for _, c in rc})
    if len(cols) == 1 and rows == list(range(rows[0], rows[-1] + 1)):
        return f"[{rows[0]}..{rows[-1]}][{cols[0]}]"
    parts = []
    for r in rows:
        cs = sorted(c for rr, c in rc if rr == r)
        if cs == list(range(cs[0], cs[-1] + 1)):
            parts.append(f"[{r}][{cs[0]}..{cs[-1]}]" if len(cs) > 1 else f"[{r}][{cs[0]}]")
        else:
            parts.append(f"[{r}][" + ",".join(map(str, cs)) + "]")
    return ", ".join(parts) if len(parts) <= 4 else f"{parts[0]}, {parts[1]}, ..., {parts[-1]} ({len(parts)} rows)"


def _columns(report, array, shape, launch):
    """The row length of an array: a shared array's last dimension; for the global
    matrices of a product m x k times k x n, k for M (its first pointer) and for N
    passed transposed (n x k), n for N and P."""
    if array in (report.shared_shapes or {}):
        dims = report.shared_shapes[array]
        return dims[-1] if dims else 1
    m, k, n = shape
    position = list(report.global_counts).index(array)
    return k if position == 0 or (position == 1 and launch.transpose_n) else n


def _cost(r):
    if r.space == "global":
        return (f"{r.sectors} sector{'s' if r.sectors > 1 else ''}: {r.bytes_used} of {r.sectors * SECTOR} "
                f"bytes used ({100 * r.efficiency:.3g}%)")
    if r.conflict == 1:
        shared_words = len(r.elements) < len(r.lanes)
        return f"{r.passes} pass{'es' if r.passes > 1 else ''}, no conflict" + (" (broadcast)" if shared_words else "")
    return f"{r.passes} passes: {r.conflict:g}-way bank conflict"


def table(kernel, tile, m, k=None, n=None, code=None, launch=None, warp=0, step=0):
    """What warp `warp` of block (0, 0) touches with each access of its step-th pass
    through the code (step 0: the first time it runs each line), from a checked run:
    the elements, and what they cost (sectors of global memory, passes of shared)."""
    k, n = k or m, n or m
    launch = launch or matmul.Launch(kernel)
    report = record(kernel, tile, m, k, n, code, launch)
    src = (code if code is not None else matmul.source(launch.kernel)).splitlines()
    rows = []
    for r in requests(report):
        if r.warp != warp or r.step != step:
            continue
        cols = _columns(report, r.array, (m, k, n), launch)
        per = len(r.lanes) // len(r.elements) if len(r.lanes) % len(r.elements) == 0 else None
        who = (f"{len(r.elements)} element{'s' if len(r.elements) > 1 else ''}"
               + (f", {per} lanes each" if per and per > 1 else ""))
        rows.append([f"<code>{html.escape(src[r.line - 1].strip())}</code>", f"{r.array} ({r.space})",
                     "load" if r.op == "R" else "store", f"{who}: {r.array}{_runs(r.elements, cols)}", _cost(r)])
    block = report.block
    name = launch.name
    return show.table(["line", "array", "", f"what the lanes of warp {warp} touch", "cost of the request"], rows,
                      f"{name}, {m} x {k} times {k} x {n}, tile {tile}: warp {warp} of block (0, 0) "
                      f"({block[0]} x {block[1]} threads), the first time it runs each access (checked-mode trace)")


@style.styled
def layout(blocks=((16, 16), (24, 4))):
    """How blocks of threads are cut into warps: each thread (x, y) coloured and labelled
    by its warp, threadIdx.x running fastest."""
    fig, axes = plt.subplots(1, len(blocks), figsize=(min(style.MAX_WIDTH_IN, 4.2 * len(blocks)), 4.6),
                             layout="constrained")
    axes = np.atleast_1d(axes)
    colours = style.PALETTE[:7]   # black is kept for the labels
    for ax, (bx, by) in zip(axes, blocks):
        threads = [(x, y) for y in range(by) for x in range(bx)]
        style.squares(ax, threads, facecolors=[colours[warp_of((x, y, 0), (bx, by, 1))[0] % len(colours)]
                                               for x, y in threads], alpha=0.55, edgecolor="white", lw=0.8)
        for y in range(by):
            for x in range(bx):
                w, lane = warp_of((x, y, 0), (bx, by, 1))
                if lane == 0:
                    ax.text(x + 0.5, y + 0.55, f"w{w}", ha="center", va="center", fontsize=9, fontweight="bold")
        ax.set_xlim(0, bx)
        ax.set_ylim(by, 0)
        ax.set_aspect("equal")
        ax.set_xticks(range(0, bx, 2 if bx > 8 else 1))
        ax.set_yticks(range(0, by, 2 if by > 8 else 1))
        ax.set_xlabel("threadIdx.x")
        ax.set_ylabel("threadIdx.y")
        threads = bx * by
        warps = -(-threads // WARP)
        if WARP % bx == 0:
            rows = WARP // bx
            how = f"each warp = {rows} row{'s' if rows > 1 else ''} of {bx} threads"
        else:
            how = f"rows of {bx} threads straddle warps"
        ax.set_title(f"{bx} x {by} block: {threads} threads, {warps} warp{'s' if warps > 1 else ''}\n"
                     f"{how}\n(w = warp, at its lane 0)", fontsize=10)
    plt.close(fig)
    return fig
