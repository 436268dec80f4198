"""Chapter 6's widget: the rung explorer, the work of one thread of each rung of the ladder
and what the stored measurements say of it."""
import html
import re

from .. import traces
from ..measure import perfdata
from .base import build, png_data_uri

RUNGS = [("tiled", "tiled"), ("rung 1", "ladder1_coarsened"), ("rung 2", "ladder2_regtile1d"),
         ("rung 3", "ladder3_regtile2d"), ("rung 4", "ladder4_vectorized"), ("rung 5", "ladder5_warptiled"),
         ("rung 6", "ladder6_pipelined")]
MEASURED_WIDTH = 4096   # the size the stored measurements of the ladder and the tuner are at


def rung_facts(kernel, tile=32):
    """From a checked run of one block (matmul and traces, as figures.thread_work draws it):
    the block's tile of P, its threads, the elements of P one thread stores, and its shared arrays."""
    from .. import figures, matmul
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
    from .. import matmul
    return {k: int(v) for k, v in re.findall(r"#ifndef (\w+)\s*\n\s*#define \1 (\d+)\b",
                                             matmul.source(kernel))}


def rung_measured(kernel, tile=32, width=MEASURED_WIDTH):
    """What the stored measurements say of one rung at Width 4096, one entry per GPU:
    (device, TFLOP/s, fraction of cuBLAS, where). Rungs up to 5 come from the ladder's
    benchmark (measure.perfdata, the numbers of the chapter's ladder table); rung 6, which that
    benchmark does not run, from the tuner's runs (measure.tuning, the chapter's rung-6 table): the
    fastest correct configuration it found, timed beside cuBLAS in the same run."""
    from ..measure import tuning
    if kernel == "ladder6_pipelined":
        defaults = source_defaults(kernel)

        def where(config):
            same = all(defaults.get(k) == v for k, v in config.items())
            return (f"the tuner's best tiles, {tuning.config_text(config)}"
                    + (", the source's defaults, which the picture shows" if same else ""))
        return [(t.device, r.tflops, r.frac_cublas, where(r.config))
                for t in tuning.tunings() if t.size == width for r in [t.best(kernel)] if r]
    return [(ds.device, r.tflops, r.frac_cublas, "the ladder's benchmark")
            for ds in perfdata.datasets() for r in [ds.result(kernel, tile, width)] if r]


def _rung_state(kernel):
    from .. import figures
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
    return build(rung_explorer_spec(initial))
