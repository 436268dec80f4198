"""Chapter 5's widgets: the occupancy explorer, and the sector predictor (predict first)."""
import html
from functools import lru_cache

from ..measure import perfdata
from .base import NO_GUESS, TILES, build, predict

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
    from .. import perfplots
    o = perfplots.occupancy(tile, limits)
    binding = min((o["by_warps"], "warps"), (limits["blocks_per_sm"], "the block limit"),
                  (o["by_smem"], "shared memory"))[1]
    facts = dict(o, binding=binding, resident_warps=o["blocks"] * o["warps"])
    cc = limits["device"].split("compute capability ")[-1].split(" ")[0]
    facts["roofline"] = []
    for ds in perfdata.datasets():
        if ds.gpu.get("compute_capability") != cc:
            continue
        r = ds.result("tiled", tile, width)
        ai = perfplots.intensity("tiled", tile, width)
        if r and {"copy_gbs", "fp32_tflops"} <= set(ds.ceilings):
            roof = min(ds.ceilings["fp32_tflops"], ds.ceilings["copy_gbs"] * ai / 1000)
            facts["roofline"].append((ds.device, ai, r.tflops, roof))
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
    from .. import perfplots
    controls = [("device", [("cc 9.0: H100, H200", perfplots.CC90_LIMITS),
                            ("cc 7.5: Colab's T4", perfplots.T4_LIMITS)]),
                ("tile", [(f"{t} x {t}", t) for t in TILES])]
    return ("occupancy", "Pick a device and a tile size: the row shows one SM's warp slots, "
            "filled by the blocks that fit, and what limits them.", controls, _occupancy_state,
            (initial[0], f"{initial[1]} x {initial[1]}"))


def occupancy_explorer(initial=("cc 9.0: H100, H200", 16)):
    """Device x tile size -> blocks and warps resident on one SM (perfplots.occupancy), and
    the tiled kernel's roofline point from the stored measurements."""
    return build(occupancy_explorer_spec(initial))


# --------------------------------------------------------------------------- the sector predictor

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
    from .. import matmul
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
    from .. import warps
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
    return predict(question, guess, str(f["sectors"]), reveal)


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
    return build(coalesce_quiz_spec(initial))
