"""The book's widgets. Each one shows states computed when the notebook runs (checked-mode
traces and the book's stored GPU measurements) and switches between them in the browser,
through tiling_course.switch: so it responds on the static site, which has no kernel, as in
Jupyter and Colab, with ipywidgets 7.7.1 and 8.x alike.

Each widget is two functions: ``<name>_spec(...)`` returns what switch.switch() takes
(name, hint, controls, render, initial) and ``<name>(...)`` builds the widget from it; the
browser test renders the same spec's states with switch.all_states() and compares."""
import base64
import html
import io
import re
from functools import lru_cache

from . import perfdata, precision, show, switch, traces

TILES = (2, 4, 8, 16, 32)


def _build(spec):
    name, hint, controls, render, initial = spec
    return switch.switch(name, hint, controls, render, initial)


# --------------------------------------------------------------------------- chapter 1

THREAD_MAP_WIDTHS = (5, 6, 8)
THREAD_MAP_BLOCKS = (2, 4, 8)


def png_data_uri(fig, dpi=72):
    """A matplotlib figure as a data: URI of a PNG (white background, no metadata that varies)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white", bbox_inches="tight",
                metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def thread_map_facts(width, block):
    """From a checked run of the naive kernel: the grid, and which blocks and threads
    store an element of P (the others overhang the matrix and return at once)."""
    report, _ = traces.record("naive", width, block)
    stores = {}
    for a in report.trace:
        if a.array == "P":
            stores.setdefault(tuple(a.block[:2]), set()).add(tuple(a.thread[:2]))
    grid = -(-width // block)
    full = sum(len(t) == block * block for t in stores.values())
    working = sum(len(t) for t in stores.values())
    return {"width": width, "block": block, "grid": grid, "blocks": grid * grid,
            "threads": grid * grid * block * block, "working": working,
            "idle": grid * grid * block * block - working, "overhanging": grid * grid - full}


def _thread_map_state(width, block):
    from . import figures
    f = thread_map_facts(width, block)
    over = (f"{f['overhanging']} of the {f['blocks']} blocks overhang the matrix: their "
            f"{f['idle']} threads outside it return at once" if f["overhanging"] else
            "no block overhangs: Width is a multiple of blockDim")
    text = (f"Width {width}, blockDim {block} x {block}: a grid of {f['grid']} x {f['grid']} blocks, "
            f"{f['threads']} threads for {width * width} elements of P; {over}.")
    fig = figures.thread_map(width=width, block=block)
    alt = f"thread map: Width {width}, blocks of {block} x {block} threads"
    return (f"<p class='tc-state-text'>{html.escape(text)}</p>"
            f"<img src='{png_data_uri(fig)}' alt='{html.escape(alt, quote=True)}' style='max-width: 100%'>")


def thread_explorer_spec(widths=THREAD_MAP_WIDTHS, blocks=THREAD_MAP_BLOCKS, initial=(6, 4)):
    controls = [("Width", [(str(x), x) for x in widths]),
                ("blockDim", [(f"{b} x {b}", b) for b in blocks])]
    return ("thread-map", "Pick a Width and a block size: the map shows which thread of which block "
            "computes each element of P, and which blocks overhang.", controls, _thread_map_state,
            (str(initial[0]), f"{initial[1]} x {initial[1]}"))


def thread_explorer(widths=THREAD_MAP_WIDTHS, blocks=THREAD_MAP_BLOCKS, initial=(6, 4)):
    """Width x block size -> the naive kernel's thread map (figures.thread_map), every
    combination drawn now from a checked run."""
    return _build(thread_explorer_spec(widths, blocks, initial))


# --------------------------------------------------------------------------- chapter 2

def tile_facts(tile, width=64, dataset=None, gpu_width=4096, live=None):
    """Everything the widget shows for one tile size: block shape, shared memory, global
    loads counted by checked mode at `width`, and GPU time and speed-up at `gpu_width`
    from the reference dataset (and from a live measurement, if given)."""
    tiled = traces.counts("tiled", width, tile)
    naive = traces.counts("naive", width, tile)
    facts = {"tile": tile, "threads": tile * tile, "shared_bytes": 2 * tile * tile * 4,
             "loads_tiled": tiled.global_loads, "loads_naive": naive.global_loads,
             "formula": 2 * width ** 3 // tile, "width": width, "gpu_width": gpu_width}
    for label, ds in (("ref", dataset), ("live", live)):
        if ds is not None:
            facts[f"{label}_naive_ms"] = ds.ms("naive", tile, gpu_width)
            facts[f"{label}_tiled_ms"] = ds.ms("tiled", tile, gpu_width)
            facts[f"{label}_speedup"] = ds.speedup(tile, gpu_width)
            facts[f"{label}_label"] = ds.label
    return facts


def _card(f):
    def ms(v):
        return f"{v:.3f} ms" if v else "not measured"
    rows = [("threads per block", f"{f['tile']} x {f['tile']} = {f['threads']}"),
            ("shared memory per block", f"2 tiles x {f['tile']}² x 4 B = {f['shared_bytes']:,} B"),
            (f"global loads at Width {f['width']} (checked mode)",
             f"tiled {f['loads_tiled']:,} = 2·Width³/TILE = {f['formula']:,}; naive {f['loads_naive']:,} "
             f"({f['loads_naive'] / f['loads_tiled']:.0f}x more)")]
    for label in ("ref", "live"):
        if f"{label}_label" in f:
            s = f[f"{label}_speedup"]
            rows.append((f"GPU time at Width {f['gpu_width']} ({html.escape(f[f'{label}_label'])})",
                         f"naive {ms(f[f'{label}_naive_ms'])}, tiled {ms(f[f'{label}_tiled_ms'])}, "
                         f"speed-up {s:.2f}" if s else "not measured"))
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table class='kernels-table'><caption>TILE_WIDTH = {f['tile']}</caption>{body}</table>"


def tile_explorer_spec(width=64, gpu_width=4096, live=None, initial=16):
    dataset = perfdata.reference()
    controls = [("TILE_WIDTH", [(str(t), t) for t in TILES])]
    return ("tile", "Click a tile size: the card shows its block, its shared memory, the global loads "
            "checked mode counts and the stored GPU times.", controls,
            lambda t: _card(tile_facts(t, width, dataset, gpu_width, live)), (str(initial),))


def tile_explorer(width=64, gpu_width=4096, live=None, initial=16):
    """A row of tile-size buttons over a card of facts for the chosen size."""
    return _build(tile_explorer_spec(width, gpu_width, live, initial))


def tile_summary(width=64, gpu_width=4096, live=None):
    """All tile sizes in one static table (what the page shows without a kernel)."""
    dataset = perfdata.reference()
    head = ["TILE", "threads/block", "shared B/block", f"global loads (Width {width})", "= 2·W³/TILE"]
    if dataset:
        head += [f"naive ms (W {gpu_width})", f"tiled ms (W {gpu_width})", "speed-up"]
    rows = []
    for t in TILES:
        f = tile_facts(t, width, dataset, gpu_width, live)
        r = [t, f["threads"], f"{f['shared_bytes']:,}", f"{f['loads_tiled']:,}", f"{f['formula']:,}"]
        if dataset:
            r += [f"{f['ref_naive_ms']:.3f}" if f["ref_naive_ms"] else "–",
                  f"{f['ref_tiled_ms']:.3f}" if f["ref_tiled_ms"] else "–",
                  f"{f['ref_speedup']:.2f}" if f["ref_speedup"] else "–"]
        rows.append(r)
    caption = (f"Tile sizes side by side; GPU times: {dataset.label}" if dataset else
               "Tile sizes side by side (this copy of the course holds no GPU measurements)")
    return show.table(head, rows, caption)


# --------------------------------------------------------------------------- chapter 5

BLOCK_HUES = ("#4477aa", "#66ccee")  # Paul Tol's bright blue and cyan: colour-blind safe


def _warp_row(o, limits):
    """One SM's warp slots: each resident block's warps in its colour, free slots grey."""
    cells = []
    for b in range(o["blocks"]):
        for _ in range(o["warps"]):
            cells.append(f"<span class='tc-warp' title='block {b}' style='background:{BLOCK_HUES[b % 2]}'></span>")
    cells += ["<span class='tc-warp' title='free' style='background:#dddddd'></span>"] * (
        limits["warps_per_sm"] - o["blocks"] * o["warps"])
    style = ("<style>.tc-warp {display: inline-block; width: 9px; height: 16px; margin: 0 1px 1px 0; "
             "border-radius: 2px;}</style>")
    return f"{style}<div class='tc-warp-row' aria-label='warp slots of one SM'>{''.join(cells)}</div>"


def occupancy_facts(limits, tile, width=4096):
    from . import perfplots
    o = perfplots.occupancy(tile, limits)
    binding = min((o["by_warps"], "warps"), (limits["blocks_per_sm"], "the block limit"),
                  (o["by_smem"], "shared memory"))[1]
    facts = dict(o, binding=binding, resident_warps=o["blocks"] * o["warps"])
    cc = limits["device"].split("compute capability ")[-1].split(" ")[0]
    facts["roofline"] = []
    for ds in perfdata.datasets():
        if ds.meta.get("device", {}).get("compute_capability") != cc:
            continue
        r = ds.result("tiled", tile, width)
        ai = perfplots.intensity("tiled", tile, width)
        if r and {"copy_gbs", "fp32_tflops"} <= set(ds.ceilings):
            roof = min(ds.ceilings["fp32_tflops"], ds.ceilings["copy_gbs"] * ai / 1000)
            facts["roofline"].append((ds.device, ai, r["tflops"], roof))
    return facts


def _occupancy_state(limits, tile, width=4096):
    f = occupancy_facts(limits, tile, width)
    reserved = limits["smem_reserved_per_block"]
    text = (f"Blocks of {tile} x {tile} = {f['threads']} threads = {f['warps']} warp{'s' * (f['warps'] > 1)} "
            f"({100 * f['lanes_used']:.0f}% of lanes used), {f['smem']:,} + {reserved:,} B of shared memory. "
            f"Blocks per SM by warps {f['by_warps']}, by the block limit {limits['blocks_per_sm']}, by shared "
            f"memory {f['by_smem']}: {f['blocks']} resident (set by {f['binding']}), "
            f"{f['resident_warps']} of {limits['warps_per_sm']} warps = {100 * f['occupancy']:.0f}% occupancy.")
    roof = " ".join(f"Roofline, tiled {tile} at Width {width} on the {dev}: {ai:.2f} FLOP/B, "
                    f"{tf:.2f} TFLOP/s measured, under a roof of {rf:.2f} TFLOP/s."
                    for dev, ai, tf, rf in f["roofline"])
    if not roof:
        roof = f"No stored measurement on a GPU of {limits['device']}: no roofline point."
    return (f"<p class='tc-state-text'>{html.escape(text)}</p>{_warp_row(f, limits)}"
            f"<p class='tc-state-text'>{html.escape(roof)}</p>")


def occupancy_explorer_spec(initial=("cc 9.0: H100, H200", 16)):
    from . import perfplots
    controls = [("device", [("cc 9.0: H100, H200", perfplots.CC90_LIMITS),
                            ("cc 7.5: Colab's T4", perfplots.T4_LIMITS)]),
                ("tile", [(f"{t} x {t}", t) for t in TILES])]
    return ("occupancy", "Pick a device and a tile size: the row shows one SM's warp slots, "
            "filled by the blocks that fit, and what limits them.", controls, _occupancy_state,
            (initial[0], f"{initial[1]} x {initial[1]}"))


def occupancy_explorer(initial=("cc 9.0: H100, H200", 16)):
    """Device x tile size -> blocks and warps resident on one SM (perfplots.occupancy), and
    the tiled kernel's roofline point from the stored measurements."""
    return _build(occupancy_explorer_spec(initial))


# --------------------------------------------------------------------------- chapter 3

BARRIER_OPTIONS = [("kept", True), ("removed", False)]


def barrier_kernel(first, second):
    """The tiled kernel with each of its two barriers kept or removed, as a corpus.WrongKernel
    (the two single removals are the corpus's no_first_barrier and no_second_barrier)."""
    from . import corpus
    if first and not second:
        return corpus.WRONG["no_second_barrier"]
    if second and not first:
        return corpus.WRONG["no_first_barrier"]
    edits = () if first else ((corpus.TILED_FIRST_BARRIER, ""), (corpus.TILED_SECOND_BARRIER, ""))
    name = "tiled" if first else "no_barriers"
    return corpus.WrongKernel(name, "tiled", "", edits, corpus.WRONG["no_first_barrier"].shape, "")


def barrier_facts(first, second):
    """What checked mode reports for the kernel with these barriers, and how many elements
    of P the stored unchecked GPU run got wrong (None: no stored run)."""
    import numpy as np

    from cudacheck import KernelError

    from . import corpus, demos
    bug = barrier_kernel(first, second)
    try:
        bug.run(backend="cpu", check=True)
        finding = None
    except KernelError as e:
        finding = (type(e).__name__, demos.wrap(str(e)))
    gpu = corpus.stored_gpu_result(bug.name) if bug.name != "tiled" else None
    wrong = None
    if gpu is not None:
        M, N = bug.inputs(np.random.default_rng(0))
        ref = M.astype(np.float64) @ N.astype(np.float64)
        bound = 2 * M.shape[1] * 2.0 ** -24 * (np.abs(M.astype(np.float64)) @ np.abs(N.astype(np.float64)))
        wrong = (int((np.abs(gpu[0] - ref) > bound).sum()), gpu[0].size, gpu[1])
    return {"kernel": bug.name, "finding": finding, "gpu_wrong": wrong}


def _barrier_state(first, second):
    f = barrier_facts(first, second)
    m, k, n, tile = 32, 32, 32, 16
    head = (f"The tiled kernel with the first barrier {'kept' if first else 'removed'} and the second "
            f"{'kept' if second else 'removed'}, checked on {m} x {k} by {k} x {n}, TILE_WIDTH {tile}: ")
    if f["finding"] is None:
        head += "checked mode finds nothing."
        body = ""
    else:
        head += f"checked mode stops at the first conflict, a {f['finding'][0]}:"
        body = (f"<pre style='white-space: pre-wrap; font-size: 0.85em'>{html.escape(f['finding'][1])}</pre>")
    if f["gpu_wrong"] is not None:
        bad, total, label = f["gpu_wrong"]
        gpu = f"Unchecked on the reference GPU ({label}): {bad} of {total} elements of P wrong."
    elif f["kernel"] == "tiled":
        gpu = ("This is the book's tiled kernel, both barriers in place: its products are right on every GPU "
               "and on the CPU runtime.")
    else:
        gpu = "The book stores no GPU run of this version."
    return f"<p class='tc-state-text'>{html.escape(head)}</p>{body}<p class='tc-state-text'>{html.escape(gpu)}</p>"


def barrier_explorer_spec():
    controls = [("first __syncthreads()", BARRIER_OPTIONS), ("second __syncthreads()", BARRIER_OPTIONS)]
    return ("barriers", "Keep or remove each of the two barriers: the box shows what checked mode reports "
            "for that kernel, and what the stored GPU run got wrong.", controls, _barrier_state,
            ("kept", "kept"))


def barrier_explorer():
    """First and second barrier kept or removed -> checked mode's finding (run now) and the
    stored unchecked GPU run's wrong elements."""
    return _build(barrier_explorer_spec())


# --------------------------------------------------------------------------- grids of cells
# Small matrices drawn as HTML tables (text, so the page stays light with every state
# embedded, and the browser test compares what each cell says).

GRID_STYLE = ("<style>.tc-grid {border-collapse: collapse; font-size: 0.72em; margin: 0;} "
              ".tc-grid td {border: 1px solid #999; min-width: 3.4em; height: 1.9em; text-align: center; "
              "padding: 0 3px; white-space: nowrap;} .tc-gridbox {margin: 0.2em 1.4em 0.6em 0;} "
              ".tc-gridcap {font-weight: bold; font-size: 0.8em; margin-bottom: 2px; white-space: nowrap;} "
              ".tc-grid td.tc-out {background: #f4f4f4; border-style: dashed; color: #999;} "
              ".tc-grid td.tc-load {background: #9ecae1;} .tc-grid td.tc-zero {background: #fdd0a2;} "
              ".tc-grid td.tc-done {background: #deebf7;} .tc-grid td.tc-sum {background: #c7e9c0;} "
              ".tc-grid td.tc-edge-r {border-right: 3px solid #c00;} "
              ".tc-grid td.tc-edge-b {border-bottom: 3px solid #c00;} "
              ".tc-grids {display: flex; flex-wrap: wrap; align-items: flex-start;}</style>")


def _grid(caption, rows, cols, cell):
    """An HTML table of rows x cols cells; cell(r, c) -> (text, css class or '')."""
    body = []
    for r in range(rows):
        tds = []
        for c in range(cols):
            text, cls = cell(r, c)
            tds.append(f"<td class='{cls}'>{text}</td>" if cls else f"<td>{text}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<div class='tc-gridbox'><div class='tc-gridcap'>{caption}</div>"
            f"<table class='tc-grid'>{''.join(body)}</table></div>")


def _grids(*tables):
    return f"<div class='tc-grids'>{''.join(tables)}</div>"


def _phase_loads(report, width, phase, pairs=(("M", "Mds"), ("N", "Nds"))):
    """From a trace of one block: in phase `phase`, for each global array, {thread: (row,
    col) it loaded} and {thread: the shared slot it wrote}."""
    first = 1 + 2 * phase  # the interval of this phase's loads (intervals are cut at barriers)
    out = {}
    for src, dst in pairs:
        loads = {a.thread[:2]: traces.rc(a.index, width) for a in report.trace
                 if a.array == src and a.op == "R" and a.interval == first}
        slots = {a.thread[:2]: tuple(a.index) for a in report.trace
                 if a.array == dst and a.op == "W" and a.interval == first}
        out[src] = (loads, slots)
    return out


# --------------------------------------------------------------------------- chapter 4

EDGE_WIDTHS = (5, 6, 7)
EDGE_BLOCKS = ((0, 0), (1, 0), (0, 1), (1, 1))
EDGE_TILE = 4
# The edge explorer's four grids, compact enough that the widget fits a 1280 x 720 slide
# unshrunk and needs no scrollbar of its own on the page: M's pair of grids beside N's
# where the width allows (a slide), one pair under the other where it does not (the page);
# in the whole matrices the rows and columns outside this phase's tiles, which hold no
# text, are drawn narrow. The grids' font is set here in px, the page's as before (0.72 of
# the widgets' 13 px) and a slide's larger, so that a slide's own, larger table font (18 px)
# does not make the grids taller than the slide.
EDGE_STYLE = ("<style>.tc-edge {display: flex; flex-wrap: wrap; align-items: flex-start; column-gap: 1.2em;} "
              ".tc-edge .tc-gridbox {margin: 0.1em 0.8em 0.3em 0;} "
              ".tc-edge .tc-gridbox table.tc-grid {font-size: 9.5px;} "
              ".tc-edge .tc-gridbox .tc-gridcap {font-size: 11px;} "
              ".reveal .tc-edge .tc-gridbox table.tc-grid {font-size: 12px;} "
              ".reveal .tc-edge .tc-gridbox .tc-gridcap {font-size: 13px;} "
              ".tc-edge .tc-grid td {min-width: 3.6em; height: 1.8em;} "
              ".tc-edge .tc-grid td.tc-far-c {min-width: 1.2em; width: 1.2em; padding: 0;} "
              ".tc-edge .tc-grid td.tc-far-r {height: 1.2em;}</style>")


@lru_cache(maxsize=None)
def _block_trace(kernel, width, tile, block):
    """One traced checked run of `block` (a widget's states read it several times: every
    phase of a block is in the one trace)."""
    return traces.record(kernel, width, tile, blocks=[block])


def edge_facts(width, block, phase, tile=EDGE_TILE):
    """From a checked run of the bounds-checked tiled kernel (tiled_bounds) on Width x Width
    matrices: in `phase`, which threads of `block` load an element of M and of N, and which
    store 0.0f into their slot (they write the slot but read nothing from global memory)."""
    report, _ = _block_trace("tiled_bounds", width, tile, block)
    loads = _phase_loads(report, width, phase)
    facts = {"width": width, "tile": tile, "block": block, "phase": phase,
             "grid": -(-width // tile), "phases": -(-width // tile)}
    for src, (loaded, slots) in loads.items():
        facts[src] = {"loaded": loaded, "slots": slots,
                      "zero": sorted(t for t in slots if t not in loaded)}
    return facts


def _edge_state(width, block, phase, tile=EDGE_TILE):
    f = edge_facts(width, block, phase, tile)
    bx, by = block
    # where this phase's tiles lie: M's in the block's row of tiles, N's in its column
    origin = {"M": (by * tile, phase * tile), "N": (phase * tile, bx * tile)}
    size = f["grid"] * tile
    parts, texts = [], []
    for src, dst in (("M", "Mds"), ("N", "Nds")):
        loaded, slots, zero = f[src]["loaded"], f[src]["slots"], f[src]["zero"]
        r0, c0 = origin[src]
        who = {rc: t for t, rc in loaded.items()}

        def big(r, c, r0=r0, c0=c0, who=who):
            cls = []
            if r >= width or c >= width:
                cls.append("tc-out")
            if r0 <= r < r0 + tile and c0 <= c < c0 + tile:
                if (r, c) in who:
                    return f"t({who[(r, c)][0]}, {who[(r, c)][1]})", "tc-load"
                return "past", "tc-zero"
            if c == width - 1:
                cls.append("tc-edge-r")
            if r == width - 1:
                cls.append("tc-edge-b")
            if not c0 <= c < c0 + tile:
                cls.append("tc-far-c")     # a column with no text in any row: drawn narrow
            if not r0 <= r < r0 + tile:
                cls.append("tc-far-r")     # a row with no text: drawn low
            return "", " ".join(cls)

        def small(ty, tx, loaded=loaded, src=src):
            if (tx, ty) in loaded:
                r, c = loaded[(tx, ty)]
                return f"{src}[{r}][{c}]", "tc-load"
            return "0.0f", "tc-zero"
        assert sorted(slots) == sorted((tx, ty) for ty in range(tile) for tx in range(tile))
        parts.append(_grid(f"{src}: this phase's tile (t = threadIdx that loads)", size, size, big))
        parts.append(_grid(f"{dst}[ty][tx] after the loads", tile, tile, small))
        texts.append(f"{len(loaded)} of the {tile * tile} threads load an element of {src}, "
                     f"{len(zero)} store 0.0f")
    text = (f"Width {width}, TILE_WIDTH {tile}: {f['grid']} x {f['grid']} blocks, {f['phases']} phases. "
            f"Block ({bx}, {by}), phase {phase}: " + "; ".join(texts) + ".")
    return (f"{GRID_STYLE}{EDGE_STYLE}<p class='tc-state-text'>{html.escape(text)}</p>"
            f"<div class='tc-edge'>{_grids(*parts[:2])}{_grids(*parts[2:])}</div>")


def edge_explorer_spec(widths=EDGE_WIDTHS, blocks=EDGE_BLOCKS, initial=(6, (1, 1), 1)):
    controls = [("Width", [(str(w), w) for w in widths]),
                ("block", [(f"({x}, {y})", (x, y)) for x, y in blocks]),
                ("phase", [(str(p), p) for p in range(-(-max(widths) // EDGE_TILE))])]
    assert all(-(-w // EDGE_TILE) == len(controls[2][1]) for w in widths), "every Width needs the same phases"
    return ("edge", "Pick a Width, a block and a phase: blue threads load their element of the tile, "
            "orange ones lie past the matrix's edge (red line; dashed: outside) and store 0.0f.", controls,
            lambda w, b, p: _edge_state(w, b, p),
            (str(initial[0]), f"({initial[1][0]}, {initial[1][1]})", str(initial[2])))


def edge_explorer(widths=EDGE_WIDTHS, blocks=EDGE_BLOCKS, initial=(6, (1, 1), 1)):
    """Width x block x phase -> which threads of the bounds-checked tiled kernel load an
    element of M's and N's tiles and which store 0.0f (from checked runs, TILE_WIDTH 4)."""
    return _build(edge_explorer_spec(widths, blocks, initial))


# --------------------------------------------------------------------------- chapter 2

PHASE_WIDTH, PHASE_TILE, PHASE_BLOCK = 6, 2, (1, 1)
PHASE_STEPS = [("1. load the tiles", "load"), ("2. multiply and add", "compute")]


@lru_cache(maxsize=None)
def phase_facts(width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    """From a checked run of the tiled kernel, traced for one block: per phase, what each
    thread loads into which slot, the products it adds (its Mds and Nds reads, mapped back
    to the elements of M and N that phase loaded), and its running sum after the phase
    (float32 fused multiply-adds in the kernel's order, as nvcc compiles `sum += a * b`, on the
    inputs the run used). Also the P it stored."""
    import numpy as np
    report, P = _block_trace("tiled", width, tile, block)
    M, N = traces.inputs(width)
    phases = []
    sums = {}
    for ph in range(width // tile):
        loads = _phase_loads(report, width, ph)
        slot_of = {src: {loads[src][1][t]: loads[src][0][t] for t in loads[src][0]} for src in "MN"}
        terms = {}
        for a in report.trace:
            if a.interval == 2 + 2 * ph and a.array in ("Mds", "Nds") and a.op == "R":
                src = a.array[0]
                t = terms.setdefault(a.thread[:2], [])
                if src == "M":
                    t.append([slot_of["M"][tuple(a.index)], None])
                else:
                    t[-1][1] = slot_of["N"][tuple(a.index)]
        for t, pairs in terms.items():
            s = sums.get(t, np.float32(0))
            for (mr, mc), (nr, nc) in pairs:
                s = precision.fma32(M[mr, mc], N[nr, nc], s)   # the kernel's sum += ... is one fma
            sums[t] = s
        phases.append({"loads": loads, "terms": terms, "sums": dict(sums)})
    return {"width": width, "tile": tile, "block": block, "phases": phases, "P": P, "M": M, "N": N}


def _phase_state(phase, step, width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    f = phase_facts(width, tile, block)
    bx, by = block
    ph = f["phases"][phase]
    origin = {"M": (by * tile, phase * tile), "N": (phase * tile, bx * tile)}
    parts = []
    for src, dst in (("M", "Mds"), ("N", "Nds")):
        loaded, slots = ph["loads"][src]
        r0, c0 = origin[src]
        who = {rc: t for t, rc in loaded.items()}

        def big(r, c, r0=r0, c0=c0, who=who, src=src):
            if (r, c) in who:
                t = who[(r, c)]
                return (f"t({t[0]}, {t[1]})" if step == "load" else f"{src}[{r}][{c}]"), "tc-load"
            earlier = (src == "M" and r0 <= r < r0 + tile and c < c0) or (src == "N" and c0 <= c < c0 + tile
                                                                         and r < r0)
            return "", "tc-done" if earlier else ""

        def small(ty, tx, loaded=loaded, src=src):
            r, c = loaded[(tx, ty)]
            return f"{src}[{r}][{c}]", "tc-load"
        parts.append(_grid(f"{src} ({width} x {width}): phase {phase}'s tile" +
                           (" (t = threadIdx that loads)" if step == "load" else ""), width, width, big))
        parts.append(_grid(f"{dst}[ty][tx]", tile, tile, small))
    done = phase + 1 if step == "compute" else phase
    sums = f["phases"][done - 1]["sums"] if done else {}

    def psum(ty, tx):
        t = (tx, ty)
        return (f"{float(sums[t]):+.4f}", "tc-sum") if t in sums else ("0", "")
    parts.append(_grid(f"Pvalue after {done} phase{'s' * (done != 1)}", tile, tile, psum))
    t0 = (0, 0)
    row, col = by * tile, bx * tile
    terms = [term for p in f["phases"][:done] for term in p["terms"][t0]]
    formula = " + ".join(f"M[{m[0]}][{m[1]}]·N[{n[0]}][{n[1]}]" for m, n in terms) or "0 (nothing added yet)"
    if step == "load":
        what = (f"Phase {phase}, step 1: each of the block's {tile * tile} threads loads one element of M's tile "
                f"(row {origin['M'][0]}..{origin['M'][0] + tile - 1}, columns {origin['M'][1]}.."
                f"{origin['M'][1] + tile - 1}) and one of N's, then waits at the first __syncthreads().")
    else:
        what = (f"Phase {phase}, step 2: each thread adds {tile} products from the tiles in shared memory, then "
                f"waits at the second __syncthreads() before the tiles are overwritten.")
    last = done == len(f["phases"])
    run = (f"Thread (0, 0) of block ({bx}, {by}) computes P[{row}][{col}]: Pvalue = {formula}"
           + (f" = {float(sums[t0]):+.4f}" if done else "") + (" (stored: the final P)." if last else "."))
    return (f"{GRID_STYLE}<p class='tc-state-text'>{html.escape(what)}</p>{_grids(*parts[:4])}{_grids(parts[4])}"
            f"<p class='tc-state-text'>{html.escape(run)}</p>")


def phase_stepper_spec(width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    controls = [("phase", [(str(p), p) for p in range(width // tile)]), ("step", PHASE_STEPS)]
    return ("phases", f"Step through the phases of block {block}: which tiles it loads, which thread loads "
            "what, and how each thread's sum grows.", controls,
            lambda p, s: _phase_state(p, s, width, tile, block), ("0", PHASE_STEPS[0][0]))


def phase_stepper(width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    """Phase x step (loads, then products) of one block of the tiled kernel, from a checked
    run: the tiles loaded, which thread loads what, and the running sums."""
    return _build(phase_stepper_spec(width, tile, block))


# --------------------------------------------------------------------------- chapter 6

RUNGS = [("tiled", "tiled"), ("rung 1", "ladder1_coarsened"), ("rung 2", "ladder2_regtile1d"),
         ("rung 3", "ladder3_regtile2d"), ("rung 4", "ladder4_vectorized"), ("rung 5", "ladder5_warptiled"),
         ("rung 6", "ladder6_pipelined")]
MEASURED_WIDTH = 4096   # the size the stored measurements of the ladder and the tuner are at


def rung_facts(kernel, tile=32):
    """From a checked run of one block (matmul and traces, as figures.thread_work draws it):
    the block's tile of P, its threads, the elements of P one thread stores, and its shared arrays."""
    from . import figures, matmul
    bm, bn = matmul.Launch(kernel).tile_of_p(tile)
    block = matmul.geometry(kernel, bm, 32, bn, tile)[1]
    report, _ = traces.record(kernel, bm, tile, k=32, n=bn, blocks=[(0, 0)], threads=[(0, 0)])
    stores = sum(a.width for a in report.trace if a.array == "P" and a.op == "W")
    threads = block[0] * block[1]
    views = figures.shared_views(kernel, report)[0]
    return {"kernel": kernel, "bm": bm, "bn": bn, "threads": threads, "per_thread": stores,
            "shared": {n: tuple(s) for n, s in report.shared_shapes.items()},
            "views": {n: tuple(s) for n, s in views.items()}}


def source_defaults(kernel):
    """The macros a kernel's source defaults (`#ifndef BM` / `#define BM 128`), as ints."""
    from . import matmul
    return {k: int(v) for k, v in re.findall(r"#ifndef (\w+)\s*\n\s*#define \1 (\d+)\b",
                                             matmul.source(kernel))}


def rung_measured(kernel, tile=32, width=MEASURED_WIDTH):
    """What the stored measurements say of one rung at Width 4096, one entry per GPU:
    (device, TFLOP/s, fraction of cuBLAS, where). Rungs up to 5 come from the ladder's
    benchmark (perfdata, the numbers of the chapter's ladder table); rung 6, which that
    benchmark does not run, from the tuner's runs (tuning, the chapter's rung-6 table): the
    fastest correct configuration it found, timed beside cuBLAS in the same run."""
    from . import tuning
    if kernel == "ladder6_pipelined":
        defaults = source_defaults(kernel)

        def where(config):
            same = all(defaults.get(k) == v for k, v in config.items())
            return (f"the tuner's best tiles, {tuning.config_text(config)}"
                    + (", the source's defaults, which the picture shows" if same else ""))
        return [(t.device, r["tflops"], r["frac_cublas"], where(r["config"]))
                for t in tuning.tunings() if t.size == width for r in [t.best(kernel)] if r]
    return [(ds.device, r["tflops"], r["frac_cublas"], "the ladder's benchmark")
            for ds in perfdata.datasets() for r in [ds.result(kernel, tile, width)] if r]


def _rung_state(kernel):
    from . import figures
    f = rung_facts(kernel)
    dims = lambda shapes: ", ".join(f"{n}{''.join(f'[{d}]' for d in s)}" for n, s in shapes.items())  # noqa: E731
    shared = dims(f["shared"])
    if f["views"] != f["shared"]:
        shared += f" (one dynamic array holding {dims(f['views'])})"
    text = (f"{kernel}: a block of {f['threads']} threads computes a {f['bm']} x {f['bn']} tile of P, so each "
            f"thread stores {f['per_thread']} element{'s' * (f['per_thread'] != 1)} of P "
            f"({f['bm'] * f['bn']} / {f['threads']}); shared memory: {shared}.")
    measured = rung_measured(kernel)
    if measured:
        one = len({w for *_, w in measured}) == 1   # the same source of numbers for every GPU
        text += (f" Measured at Width {MEASURED_WIDTH}" + (f" ({measured[0][3]})" if one else "") + ": "
                 + "; ".join(f"{t:.1f} TFLOP/s on the {d}, {frac:.2f} of cuBLAS" + ("" if one else f" ({w})")
                             for d, t, frac, w in measured) + ".")
    alt = f"the work of two threads of {kernel}"
    return (f"<p class='tc-state-text'>{html.escape(text)}</p>"
            f"<img src='{png_data_uri(figures.thread_work(kernel))}' alt='{html.escape(alt, quote=True)}' "
            f"style='max-width: 100%'>")


def rung_explorer_spec(initial="rung 1"):
    controls = [("kernel", RUNGS)]
    return ("rungs", "Click a rung: the picture shows what two threads of block (0, 0) compute and read, "
            "recorded by checked mode.", controls, _rung_state, (initial,))


def rung_explorer(initial="rung 1"):
    """The tiled kernel and rungs 1 to 6 -> the work of one thread (figures.thread_work) and what
    the stored measurements say of it (rung_measured)."""
    return _build(rung_explorer_spec(initial))


# ----------------------------------------------------------------- predict, then see
# Widgets that ask for a prediction before they show anything: a second control holds the
# reader's guess, its first option "?" shows only the question; every other option shows
# what really happened (a run recorded now, or the stored GPU record) and whether the
# guess was right.

NO_GUESS = "?"


def _predict(question, guess, right, reveal):
    """One state of a predict-first widget: the question, and unless `guess` is NO_GUESS,
    whether it is `right` and what happened (`reveal`, HTML)."""
    head = f"<p class='tc-state-text'>{html.escape(question)}</p>"
    if guess == NO_GUESS:
        return head + "<p class='tc-state-text'><em>Choose your prediction to see what happened.</em></p>"
    verdict = "Right." if guess == right else f"Not this time: the answer is {right}."
    return head + f"<p class='tc-state-text'><strong>{html.escape(verdict)}</strong></p>" + reveal


# --------------------------------------------------------------------------- chapter 3

RACE_A = ((1.0, 2.0), (3.0, 4.0))
RACE_ORDERS = [("(1, 0) first", "forward"), ("(0, 1) first", "reverse"), ("lock step", "lock step")]
RACE_GUESSES = [NO_GUESS, "3", "2", "0"]
RACE_WHAT = {"3": "3, the element that belongs there", "2": "2, its own element, unchanged",
             "0": "0, what the tile held before anyone stored"}


@lru_cache(maxsize=None)
def race_replay_facts(order):
    """The tile transpose without its barrier (exercise sync-5's starter), BLOCK_WIDTH 2, on
    A = RACE_A, run on the CPU runtime: `order` "forward" (threads in index order, each to
    its end), "reverse", or "lock step" (the same kernel with a __syncwarp() between the
    store and the read: every thread stores, then every thread reads). Returns A after the
    run, and what checked mode reports for the barrier-free kernel."""
    import numpy as np

    from cudacheck import KernelError, RawModule

    from . import exercises
    src = exercises.starter("sync-5")
    if order == "lock step":
        src = src.replace("    A[index] = tile[tx][ty];", "    __syncwarp();\n    A[index] = tile[tx][ty];", 1)
    options = ("-DBLOCK_WIDTH=2",)
    A = np.array(RACE_A, np.float32)
    fn = RawModule(src, backend="cpu", options=options).get_function("block_transpose")
    fn((1, 1), (2, 2), (A, np.int32(2), np.int32(2)), **({} if order == "lock step" else {"schedule": order}))
    checked = RawModule(exercises.starter("sync-5"), backend="cpu", check=True,
                        options=options).get_function("block_transpose")
    try:
        checked((1, 1), (2, 2), (np.array(RACE_A, np.float32), np.int32(2), np.int32(2)))
        finding = None
    except KernelError as e:
        finding = type(e).__name__
    return {"A": A.tolist(), "finding": finding}


def _race_steps(order):
    threads = [(0, 0), (1, 0), (0, 1), (1, 1)]
    if order == "lock step":
        return ("all four threads store their element into the tile, then all four read (here a __syncwarp() "
                "between the store and the read makes them)")
    seq = threads if order == "forward" else threads[::-1]
    return "each thread runs to its end before the next starts: " + ", ".join(f"({x}, {y})" for x, y in seq)


def _race_state(order, guess):
    f = race_replay_facts(order)
    A = f["A"]
    question = ("Thread (1, 0) stores A[0][1] = 2 into tile[0][1], then writes A[0][1] = tile[1][0], which thread "
                "(0, 1) stores. With no barrier between store and read, what does A[0][1] hold after the kernel?")
    right = str(int(A[0][1]))
    expected = [[RACE_A[c][r] for c in range(2)] for r in range(2)]

    def cell(r, c):
        ok = A[r][c] == expected[r][c]
        return f"{A[r][c]:g}", "tc-sum" if ok else "tc-zero"
    wrong = sum(A[r][c] != expected[r][c] for r in range(2) for c in range(2))
    order_text = ("lock step, as a warp of a GPU before Volta ran it" if order == "lock step" else
                  f"the CPU runtime's {order} order")
    text = (f"Replay ({order_text}): {_race_steps(order)}. A[0][1] ends as {RACE_WHAT.get(right, right)}; "
            f"{wrong} of 4 elements wrong (orange).")
    if f["finding"]:
        text2 = (f"Checked mode reports a {f['finding']} for the barrier-free kernel whatever the order: "
                 "nothing in the kernel makes a GPU pick the lucky one, and since Volta not even a warp runs its "
                 "threads in lock step.")
    else:
        text2 = "Checked mode finds nothing."
    reveal = (f"{GRID_STYLE}<p class='tc-state-text'>{html.escape(text)}</p>"
              f"{_grids(_grid('A before', 2, 2, lambda r, c: (f'{RACE_A[r][c]:g}', '')), _grid('A after', 2, 2, cell))}"
              f"<p class='tc-state-text'>{html.escape(text2)}</p>")
    return _predict(question, guess, right, reveal)


def race_replay_spec(initial=("(1, 0) first", NO_GUESS)):
    controls = [("order", RACE_ORDERS), ("A[0][1] after", [(g, g) for g in RACE_GUESSES])]
    return ("race-replay", "The 2 x 2 tile transpose with no barrier. Pick who runs first, predict A[0][1], "
            "then see the replay, run on the CPU runtime.", controls, _race_state, initial)


def race_replay(initial=("(1, 0) first", NO_GUESS)):
    """Order of two threads x the reader's guess -> the barrier-free transpose's real result
    in that order (race_replay_facts) and checked mode's verdict."""
    return _build(race_replay_spec(initial))


# --------------------------------------------------------------------------- chapter 5

COALESCE_CASES = [
    ("naive: M", ("naive", None, "M", "R")),
    ("naive: N", ("naive", None, "N", "R")),
    ("swapped: M", ("naive", "swapped", "M", "R")),
    ("swapped: P", ("naive", "swapped", "P", "W")),
    ("tiled: M", ("tiled", None, "M", "R")),
]
COALESCE_GUESSES = [NO_GUESS, "2", "4", "16", "32"]
COALESCE_SWAP = (("int row = blockIdx.y * blockDim.y + threadIdx.y;",
                  "int row = blockIdx.y * blockDim.y + threadIdx.x;"),
                 ("int col = blockIdx.x * blockDim.x + threadIdx.x;",
                  "int col = blockIdx.x * blockDim.x + threadIdx.y;"))


def coalesce_source(kernel, variant):
    """The book's kernel, or with `variant` "swapped" the naive kernel with row taken from
    threadIdx.x and col from threadIdx.y (chapter 5's uncoalesced example)."""
    from . import matmul
    src = matmul.source(kernel)
    if variant == "swapped":
        for old, new in COALESCE_SWAP:
            assert old in src, old
            src = src.replace(old, new, 1)
    return src


@lru_cache(maxsize=None)
def coalesce_facts(kernel, variant, array, op, tile=16, width=64):
    """Warp 0 of block (0, 0), 16 x 16 threads, the first time it makes this access (a
    checked-mode trace, tiling_course.warps): the source line, the elements, the sectors."""
    from . import warps
    src = coalesce_source(kernel, variant)
    report = warps.record(kernel, tile, width, code=src if variant else None)
    r = next(q for q in warps.requests(report) if q.warp == 0 and q.step == 0 and q.array == array and q.op == op)
    first = dict((lane, element) for lane, element, _ in r.lanes)
    # neighbours: lanes x and x + 1 of one row of the block (threadIdx.x and threadIdx.x + 1)
    apart = max(abs(first[lane + 1] - first[lane]) for lane in first if lane + 1 in first and (lane + 1) % tile)
    return {"line": src.splitlines()[r.line - 1].strip(), "lanes": len(r.lanes), "elements": len(r.elements),
            "sectors": r.sectors, "bytes_used": r.bytes_used, "efficiency": r.efficiency, "apart": apart}


def _coalesce_state(case, guess):
    kernel, variant, array, op = case
    f = coalesce_facts(*case)
    what = {"naive": "the naive kernel", "tiled": "the tiled kernel (TILE_WIDTH 16)"}[kernel]
    if variant == "swapped":
        what = "the naive kernel with row from threadIdx.x and col from threadIdx.y"
    question = (f"In {what}, 16 x 16 blocks, Width 64: warp 0 (threads (0..15, 0) and (0..15, 1)) runs "
                f"`{f['line']}`. How many 32-byte sectors does its {'load' if op == 'R' else 'store'} of {array} "
                "touch?")
    reveal = f"<p class='tc-state-text'>{html.escape(_coalesce_text(f, array))}</p>"
    return _predict(question, guess, str(f["sectors"]), reveal)


def _coalesce_text(f, array):
    used = f"{f['bytes_used']} of the {32 * f['sectors']} bytes fetched are used ({100 * f['efficiency']:.3g}%)"
    verdict = ("coalesced: neighbouring lanes touch neighbouring elements, or the same one" if f["apart"] <= 1 else
               f"not coalesced: neighbouring lanes touch elements {f['apart']} apart, a row of the matrix")
    return (f"The checked-mode trace: the 32 lanes touch {f['elements']} distinct element"
            f"{'s' if f['elements'] > 1 else ''} of {array}, in {f['sectors']} sectors; {used}. So the request is "
            f"{verdict}.")


def coalesce_quiz_spec(initial=("naive: M", NO_GUESS)):
    controls = [("access", COALESCE_CASES), ("sectors", [(g, g) for g in COALESCE_GUESSES])]
    return ("coalesce", "Pick an access of warp 0, predict how many 32-byte sectors it touches, then see the "
            "trace.", controls, _coalesce_state, initial)


def coalesce_quiz(initial=("naive: M", NO_GUESS)):
    """An access of warp 0 x the reader's guess of its sectors -> the count from a
    checked-mode trace (coalesce_facts)."""
    return _build(coalesce_quiz_spec(initial))


# --------------------------------------------------------------------------- chapter 7

HOST_GUESSES = [NO_GUESS, "ran to the end", "stopped with an error", "crashed"]


@lru_cache(maxsize=None)
def host_bug_facts(name):
    """A host-side bug of chapter 7's program: what the recorded GPU run did (programs.json)
    and what checked mode reports now on the CPU runtime."""
    from . import programs
    rec = (programs.records() or {}).get("bugs", {}).get(name)
    found = programs.finding(name)
    if rec is None:
        outcome, last = None, ""
    else:
        lines = (rec["stdout"] + rec["stderr"]).strip().splitlines()
        last = lines[-1] if lines else ""
        outcome = ("crashed" if rec["exit_code"] is None or rec["exit_code"] < 0 else
                   "ran to the end" if rec["exit_code"] == 0 else "stopped with an error")
    return {"what": programs.BUGS[name].what, "outcome": outcome,
            "exit_code": None if rec is None else rec["exit_code"],
            "passed": None if rec is None else rec["stdout"].count("PASSED"), "last": last,
            "finding": type(found).__name__ if found is not None else None}


def _host_bug_state(name, guess):
    from . import programs
    f = host_bug_facts(name)
    question = f"{f['what']} Compiled with nvcc and run on the reference GPU, unchecked: what did the program do?"
    data = programs.records() or {}
    where = f"{data['device']}, {data['date']}" if data else "no GPU run recorded"
    if f["outcome"] is None:
        return _predict(question, guess, "not recorded", "<p class='tc-state-text'>No GPU run recorded.</p>")
    if f["outcome"] == "crashed":
        run = f"On the GPU ({where}): the program died, with no exit code. The last line: {f['last']}"
    else:
        run = (f"On the GPU ({where}): exit code {f['exit_code']}; it printed PASSED {f['passed']} "
               f"time{'s' if f['passed'] != 1 else ''} of 2. Its last line: {f['last']}")
    checked = (f"Checked mode on the CPU runtime reports a {f['finding']}, with the line." if f["finding"] else
               "Checked mode finds nothing.")
    reveal = f"<p class='tc-state-text'>{html.escape(run)}</p><p class='tc-state-text'>{html.escape(checked)}</p>"
    return _predict(question, guess, f["outcome"], reveal)


def host_bug_quiz_spec(initial=("missing copy back", NO_GUESS)):
    from . import programs
    controls = [("bug", [(name, name) for name in programs.BUGS]), ("it", [(g, g) for g in HOST_GUESSES])]
    return ("host-bugs", "Pick a bug, predict what the unchecked program did on the GPU, then see the record and "
            "what checked mode says.", controls, _host_bug_state, initial)


def host_bug_quiz(initial=("missing copy back", NO_GUESS)):
    """A host-side bug x the reader's guess -> the stored GPU run's outcome and checked mode's
    finding (host_bug_facts)."""
    return _build(host_bug_quiz_spec(initial))
