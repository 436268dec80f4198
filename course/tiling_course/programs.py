"""Chapter 7's whole program (kernels/program_tiled.cu) and its host-side bugs.

The file names the book's kernels with `#include "tiled_bounds.cu"` lines, and `source()`
pastes each kernel's file in their place: the chapter shows, and every backend compiles,
one self-contained program, while each kernel keeps its one source in kernels/. (The CPU
runtime applies its front end's edits to the program's own text only, so a kernel that
needs one, such as an `extern __shared__` array, cannot come from an included file.)
Each bug of BUGS is an edit of the program, run in
checked mode on the CPU runtime; what a GPU does with the same edit is recorded by
scripts/record_program_runs.py into data/programs.json (device, date, versions), which
`gpu_run()` and `bug_table()` show."""
import html
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import cudacheck
from cudacheck import KernelError

from . import matmul, show, sources

FILE = "program_tiled.cu"
DATA = "programs.json"
# The program's command line in the chapter and in the GPU records: its default shape.
ARGS = ()


def source():
    """The program as the chapter shows it: kernels/program_tiled.cu with the book's kernel
    files pasted in for its `#include "<kernel>.cu"` lines."""
    def paste(m):
        return sources.read(m[1]).rstrip("\n")
    return re.sub(r'^#include "(\w+\.cu)"$', paste, sources.read(FILE), flags=re.M)


def run(code=None, backend="cpu", check=False, args=ARGS, time_limit=None):
    """Run the program (or `code`, an edit of it)."""
    return cudacheck.run_program(code or source(), backend=backend, check=check, args=[str(a) for a in args],
                                 time_limit=time_limit)


def step(n):
    """The program's lines under its `// Step n:` comment."""
    return show.step_of(source(), n, FILE)


def grid_figure(m=18, n=11, tile=4):
    """P (m x n) after chapter 4's bounds-checked kernel ran on the CPU runtime with the
    grid rounded up and rounded down: P starts as NaN, so an element no thread wrote
    stays NaN and is drawn as such. (The plotting modules load here, not with the module:
    the exercise checker and the grader import this module and draw nothing.)"""
    from . import style
    return style.styled(_grid_figure)(m, n, tile)


def _grid_figure(m, n, tile):
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    from . import style
    rng = np.random.default_rng(0)
    k = 7
    M, N = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    kernel = cudacheck.RawKernel(matmul.source("tiled_bounds"), "matmul_tiled_bounds",
                                 options=(f"-DTILE_WIDTH={tile}",), backend="cpu")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 5.2), layout="constrained")
    for ax, (how, grid) in zip(axes, [("rounded up", (-(-n // tile), -(-m // tile))),
                                      ("rounded down", (n // tile, m // tile))]):
        P = np.full((m, n), np.nan, np.float32)
        kernel(grid, (tile, tile), (M, N, P, np.int32(m), np.int32(k), np.int32(n)))
        missing = np.isnan(P)
        ax.imshow(np.where(missing, 1, 0), cmap=plt.matplotlib.colors.ListedColormap(
            [style.tint(style.BLUE, 0.35), style.VERMILLION]), vmin=0, vmax=1, extent=(0, n, m, 0))
        for gx in range(grid[0]):
            for gy in range(grid[1]):
                ax.add_patch(Rectangle((gx * tile, gy * tile), tile, tile, fill=False, edgecolor="black", lw=1.5))
        ax.set_xlim(0, max(n, -(-n // tile) * tile))
        ax.set_ylim(max(m, -(-m // tile) * tile), 0)
        ax.set_title(f"grid {how}: {grid[0]} x {grid[1]} blocks\n{int(missing.sum())} of {m * n} elements never "
                     f"written", fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("column of P")
        ax.set_ylabel("row of P")
    fig.suptitle(f"P ({m} x {n}) from the bounds-checked tiled kernel, {tile} x {tile} tiles\n"
                 f"blue: written; red: never written; black squares: the blocks", fontsize=10)
    return fig


@dataclass(frozen=True)
class Bug:
    """A host-side bug: `edits` ((old, new) pairs) made to the program, and what checked
    mode reports: an exception or a warning class, by name."""
    what: str
    edits: tuple
    reports: str

    def source(self):
        return matmul.apply_edits(source(), self.edits, self.what, FILE)


COPY_BACK = "    CHECK(cudaMemcpy(h_P, d_P, bytesP, cudaMemcpyDeviceToHost));\n    printf(\"Static"
REPORT_1 = "report(\"Static tiles\", h_M, h_N, h_P"
LAUNCH_2 = "    matmul_tiled_dynamic<<<grid2, block2, shared>>>(d_M, d_N, d_P, m, k, n);\n"
COPY_BACK_2 = "    CHECK(cudaMemcpy(h_P, d_P, bytesP, cudaMemcpyDeviceToHost));\n    printf(\"Dynamic"
BUGS = {
    "missing copy back": Bug(
        "The second result is never copied back: the host checks what h_P still holds, the first product.",
        ((COPY_BACK_2, "    printf(\"Dynamic"),), "ResultNeverCopiedWarning"),
    "size in elements": Bug(
        "M's copy counts elements, not bytes: a quarter of M reaches the device.",
        (("CHECK(cudaMemcpy(d_M, h_M, bytesM,", "CHECK(cudaMemcpy(d_M, h_M, size_t(m) * k,"),),
        "UninitializedReadError"),
    "host reads device memory": Bug(
        "The host prints an element of d_P, a device pointer, instead of h_P.",
        ((REPORT_1, "printf(\"%f\\n\", d_P[0]);\n    " + REPORT_1),),
        "HostDeviceAccessError"),
    "use after free": Bug(
        "d_M is freed after the first launch, and the second launch still reads it.",
        (("    // Step 6:", "    CHECK(cudaFree(d_M));\n    // Step 6:"),), "UseAfterFreeError"),
    "double free": Bug(
        "d_N is freed twice.",
        (("    CHECK(cudaFree(d_P));", "    CHECK(cudaFree(d_P));\n    CHECK(cudaFree(d_N));"),), "DoubleFreeError"),
    "wrong direction": Bug(
        "The first copy back says cudaMemcpyHostToDevice, though its destination h_P is host memory.",
        ((COPY_BACK, COPY_BACK.replace("DeviceToHost", "HostToDevice")),), "DeviceMemoryError"),
    "grid rounded down": Bug(
        "The grid is n / TILE_WIDTH by m / TILE_WIDTH blocks, rounded down: P's last columns and rows are never "
        "computed.",
        (("dim3 grid((n + TILE_WIDTH - 1) / TILE_WIDTH, (m + TILE_WIDTH - 1) / TILE_WIDTH);",
          "dim3 grid(n / TILE_WIDTH, m / TILE_WIDTH);"),), "UninitializedReadError"),
    "unchecked launch": Bug(
        "The dynamic tile starts at 64: 4,096 threads per block, a launch that cannot start, and its error is "
        "never checked.",
        (("int tile = 32;", "int tile = 64;"), ("|| tile * tile > prop.maxThreadsPerBlock", ""),
         (LAUNCH_2 + "    CHECK(cudaGetLastError());\n", LAUNCH_2)),
        "LaunchConfigError"),
    "never frees": Bug(
        "The program ends without cudaFree.",
        (("    CHECK(cudaFree(d_M));\n    CHECK(cudaFree(d_N));\n    CHECK(cudaFree(d_P));\n", ""),),
        "MemoryLeakWarning"),
}


@lru_cache(maxsize=None)
def finding(name):
    """What checked mode says of bug `name`: the exception it raised, or the program's
    first warning, or None. Run once per process: the table and the widget of chapter 7
    both ask."""
    try:
        result = run(BUGS[name].source(), check=True)
    except KernelError as e:
        return e
    return result.warnings[0] if result.warnings else None


def _line(found):
    return getattr(found, "line", 0) or getattr(found, "details", {}).get("line", 0)


def checked(name):
    """Run bug `name` in checked mode; show and return what it reports."""
    from IPython.display import Markdown, display

    from .demos import wrap
    found = finding(name)
    shown = (f"**{type(found).__name__}**\n\n```text\n{wrap(str(found))}\n```" if found
             else "Checked mode found nothing.")
    display(Markdown(show.diff_of(source(), BUGS[name].source(), FILE, name, BUGS[name].what) + "\n\n" + shown))
    return found


def records():
    """The stored GPU runs (data/programs.json, a run of outputs of the one measurement model,
    measure.model) as {device, date, versions, program, bugs: {name: ...}}, each run's
    {stdout, stderr, exit_code}; or None."""
    from .measure import model
    run = model.stored_run(DATA)
    if run is None:
        return None
    outputs = {r.config["bug"]: r.extra for r in run.records}
    return {"device": run.meta.device, "date": run.meta.date, "versions": run.meta.software,
            "program": outputs.pop(None), "bugs": outputs}


def _label(data):
    v = data["versions"]
    return (f"{data['device']}, {data['date']}, nvcc {v['nvcc']}, driver {v['driver']} "
            f"(scripts/record_program_runs.py)")


def gpu_run():
    """The program's output on the reference GPU, compiled by nvcc, from the records."""
    from IPython.display import Markdown
    data = records()
    if data is None:
        return Markdown("(No GPU run of the program is recorded in this copy of the book.)")
    return Markdown(f"On {_label(data)}:\n\n```text\n{data['program']['stdout'].rstrip()}\n```")


def _gpu_outcome(rec):
    if rec is None:
        return "not recorded"
    last = (rec["stdout"] + rec["stderr"]).strip().splitlines()
    said = html.escape(last[-1]) if last else "(nothing)"
    passed = rec["stdout"].count("PASSED")
    return f"exit code {rec['exit_code']}; {passed} of 2 PASSED; last line: <code>{said}</code>"


def bug_table():
    """Each bug, what checked mode reports (run now) and what the GPU did (recorded)."""
    data = records() or {}
    rows = []
    for name, bug in BUGS.items():
        found = finding(name)
        report = f"<code>{type(found).__name__}</code>" if found else "nothing"
        if found is not None and _line(found):
            report += f", line {_line(found)}"
        rows.append([html.escape(name), html.escape(bug.what), report,
                     _gpu_outcome(data.get("bugs", {}).get(name))])
    where = _label(data) if data else "no GPU run recorded"
    return show.table(["bug", "the change", "checked mode (CPU runtime)", "on the GPU (nvcc, unchecked)"], rows,
                      f"Host-side bugs in program_tiled.cu. GPU column: {where}.")

