"""Chapter 4's widget: the edge explorer, which threads of the bounds-checked tiled kernel
load and which store 0.0f."""
import html

from .base import GRID_STYLE, block_trace, build, grid, grids, phase_loads

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


def edge_facts(width, block, phase, tile=EDGE_TILE):
    """From a checked run of the bounds-checked tiled kernel (tiled_bounds) on Width x Width
    matrices: in `phase`, which threads of `block` load an element of M and of N, and which
    store 0.0f into their slot (they write the slot but read nothing from global memory)."""
    report, _ = block_trace("tiled_bounds", width, tile, block)
    loads = phase_loads(report, width, phase)
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
        parts.append(grid(f"{src}: this phase's tile (t = threadIdx that loads)", size, size, big))
        parts.append(grid(f"{dst}[ty][tx] after the loads", tile, tile, small))
        texts.append(f"{len(loaded)} of the {tile * tile} threads load an element of {src}, "
                     f"{len(zero)} store 0.0f")
    text = (f"Width {width}, TILE_WIDTH {tile}: {f['grid']} x {f['grid']} blocks, {f['phases']} phases. "
            f"Block ({bx}, {by}), phase {phase}: " + "; ".join(texts) + ".")
    return (f"{GRID_STYLE}{EDGE_STYLE}<p class='tc-state-text'>{html.escape(text)}</p>"
            f"<div class='tc-edge'>{grids(*parts[:2])}{grids(*parts[2:])}</div>")


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
    return build(edge_explorer_spec(widths, blocks, initial))
