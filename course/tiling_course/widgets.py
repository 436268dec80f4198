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
        gpu = "This is the lecture's kernel: its products are right on every GPU and on the CPU runtime."
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
