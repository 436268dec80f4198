"""Chapter 2's widgets: the tile explorer (and its static table), and the phase stepper."""
import html
from functools import lru_cache

from .. import precision, show, traces
from ..measure import perfdata
from .base import GRID_STYLE, TILES, block_trace, build, grid, grids, phase_loads


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
    return build(tile_explorer_spec(width, gpu_width, live, initial))


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


# --------------------------------------------------------------------------- the phase stepper

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
    report, P = block_trace("tiled", width, tile, block)
    M, N = traces.inputs(width)
    phases = []
    sums = {}
    for ph in range(width // tile):
        loads = phase_loads(report, width, ph)
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
        parts.append(grid(f"{src} ({width} x {width}): phase {phase}'s tile" +
                           (" (t = threadIdx that loads)" if step == "load" else ""), width, width, big))
        parts.append(grid(f"{dst}[ty][tx]", tile, tile, small))
    done = phase + 1 if step == "compute" else phase
    sums = f["phases"][done - 1]["sums"] if done else {}

    def psum(ty, tx):
        t = (tx, ty)
        return (f"{float(sums[t]):+.4f}", "tc-sum") if t in sums else ("0", "")
    parts.append(grid(f"Pvalue after {done} phase{'s' * (done != 1)}", tile, tile, psum))
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
    return (f"{GRID_STYLE}<p class='tc-state-text'>{html.escape(what)}</p>{grids(*parts[:4])}{grids(parts[4])}"
            f"<p class='tc-state-text'>{html.escape(run)}</p>")


def phase_stepper_spec(width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    controls = [("phase", [(str(p), p) for p in range(width // tile)]), ("step", PHASE_STEPS)]
    return ("phases", f"Step through the phases of block {block}: which tiles it loads, which thread loads "
            "what, and how each thread's sum grows.", controls,
            lambda p, s: _phase_state(p, s, width, tile, block), ("0", PHASE_STEPS[0][0]))


def phase_stepper(width=PHASE_WIDTH, tile=PHASE_TILE, block=PHASE_BLOCK):
    """Phase x step (loads, then products) of one block of the tiled kernel, from a checked
    run: the tiles loaded, which thread loads what, and the running sums."""
    return build(phase_stepper_spec(width, tile, block))
