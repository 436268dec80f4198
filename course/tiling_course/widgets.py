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
from functools import lru_cache

from . import perfdata, show, switch, traces

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
    return (f"{GRID_STYLE}<p class='tc-state-text'>{html.escape(text)}</p>"
            f"{_grids(*parts[:2])}{_grids(*parts[2:])}")


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
    (float32, in the kernel's order, on the inputs the run used). Also the P it stored."""
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
                s = np.float32(s + np.float32(M[mr, mc] * N[nr, nc]))
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
         ("rung 3", "ladder3_regtile2d"), ("rung 4", "ladder4_vectorized"), ("rung 5", "ladder5_warptiled")]


def rung_facts(kernel, tile=32):
    """From a checked run of one block (matmul and traces, as figures.thread_work draws it):
    the block's tile of P, its threads, the elements of P one thread stores, and its shared arrays."""
    from . import matmul
    bm, bn = matmul.Launch(kernel).tile_of_p(tile)
    block = matmul.geometry(kernel, bm, 32, bn, tile)[1]
    report, _ = traces.record(kernel, bm, tile, k=32, n=bn, blocks=[(0, 0)], threads=[(0, 0)])
    stores = sum(a.width for a in report.trace if a.array == "P" and a.op == "W")
    threads = block[0] * block[1]
    return {"kernel": kernel, "bm": bm, "bn": bn, "threads": threads, "per_thread": stores,
            "shared": {n: tuple(s) for n, s in report.shared_shapes.items()}}


def _rung_state(kernel):
    from . import figures
    f = rung_facts(kernel)
    shared = ", ".join(f"{n}{''.join(f'[{d}]' for d in s)}" for n, s in f["shared"].items())
    text = (f"{kernel}: a block of {f['threads']} threads computes a {f['bm']} x {f['bn']} tile of P, so each "
            f"thread stores {f['per_thread']} element{'s' * (f['per_thread'] != 1)} of P "
            f"({f['bm'] * f['bn']} / {f['threads']}); shared memory: {shared}.")
    alt = f"the work of two threads of {kernel}"
    return (f"<p class='tc-state-text'>{html.escape(text)}</p>"
            f"<img src='{png_data_uri(figures.thread_work(kernel))}' alt='{html.escape(alt, quote=True)}' "
            f"style='max-width: 100%'>")


def rung_explorer_spec(initial="rung 1"):
    controls = [("kernel", RUNGS)]
    return ("rungs", "Click a rung: the picture shows what two threads of block (0, 0) compute and read, "
            "recorded by checked mode.", controls, _rung_state, (initial,))


def rung_explorer(initial="rung 1"):
    """The tiled kernel and rungs 1 to 5 -> the work of one thread (figures.thread_work)."""
    return _build(rung_explorer_spec(initial))
