"""Chapter 1's widget: the naive kernel's thread map, Width x block size."""
import html

from .. import traces
from .base import build, png_data_uri

THREAD_MAP_WIDTHS = (5, 6, 8)
THREAD_MAP_BLOCKS = (2, 4, 8)


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
    from .. import figures
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
    return build(thread_explorer_spec(widths, blocks, initial))
