"""The tile-size widget. Works with ipywidgets 7.7.1 (Colab) and 8.x: it uses only
ToggleButtons, Output and observe(names="value"), unchanged between the two."""
import html

from . import perfdata, show, traces

TILES = (2, 4, 8, 16, 32)


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


def tile_explorer(width=64, gpu_width=4096, live=None, initial=16):
    """A row of tile-size buttons over a card of facts for the chosen size."""
    import ipywidgets as w
    from IPython.display import HTML, display
    dataset = perfdata.reference()
    facts = {t: tile_facts(t, width, dataset, gpu_width, live) for t in TILES}
    buttons = w.ToggleButtons(options=[str(t) for t in TILES], value=str(initial), description="TILE_WIDTH")
    out = w.Output()

    def show(change=None):
        out.clear_output(wait=True)
        with out:
            display(HTML(_card(facts[int(buttons.value)])))
    buttons.observe(show, names="value")
    show()
    return w.VBox([buttons, out])


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
