"""The planted-bug scorecard of Hopper pipelines (issue 44, item 2): each bug of
tiling_course.pipeline_bugs (chapter 9's kernels and the RING kernel, warp-specialised TMA + wgmma
GEMMs) run checked on the CPU runtime, as a table: kind, bug, expected class, the class checked mode
raised, the first sentence of its message.

    python scripts/hopper_bug_scorecard.py [--markdown]

On an H100 or H200 with compute-sanitizer, the same bugs on the GPU (built with their watchdogs, so
a deadlock traps), each under racecheck, synccheck and memcheck, and alone (how far its product is
from float64's); a table of what each tool reported:

    python scripts/hopper_bug_scorecard.py --sanitizer [--jobs 12] [--out FILE]
    python scripts/hopper_bug_scorecard.py --gpu-run NUMBER     # one bug once (what --sanitizer runs)
"""
import argparse
import concurrent.futures as cf
import re
import subprocess
import sys

import numpy as np

TOOLS = ("racecheck", "synccheck", "memcheck")


def first_sentence(message, width=150):
    """The message's first sentence after `kernel `k`: block (..):`, at most `width` characters."""
    text = re.sub(r"^kernel `[^`]*`: block \([^)]*\):? ", "", message.split("\n")[0])
    text = text[:text.index(". ") + 1] if ". " in text else text
    return text if len(text) <= width else text[:width - 1] + "…"


def checked_rows():
    """(bug, the class raised or "no finding", its message's first sentence) of every bug."""
    import cudacheck
    from tiling_course import pipeline_bugs
    modules = pipeline_bugs.modules()
    for bug in pipeline_bugs.BUGS:
        try:
            rng = np.random.default_rng(bug.number)
            pipeline_bugs.run(modules[bug.source], bug.source, bug.kernel, bug.number, rng)
            yield bug, "no finding", ""
        except cudacheck.KernelError as e:
            yield bug, type(e).__name__, first_sentence(str(e))


def gpu_run(number):
    """Bug `number` (0: none, of each source) once on the GPU: RESULT and how far P is from float64."""
    import cupy

    import cudacheck
    from tiling_course import pipeline_bugs
    cupy.cuda.set_allocator(None)   # every array its own allocation, as memcheck needs
    none = (("ring", "ring"), ("hopper.cu", "matmul_persistent"))
    bugs = ([b for b in pipeline_bugs.BUGS if b.number == number]
            or [pipeline_bugs.Bug(0, "", source, kernel, "none", "", "") for source, kernel in none])
    modules = pipeline_bugs.modules(backend="gpu", check=False)
    for bug in bugs:
        try:
            P, exact = pipeline_bugs.run(modules[bug.source], bug.source, bug.kernel, number,
                                         np.random.default_rng(number), xp=cupy)
            P = cupy.asnumpy(P)[:, :exact.shape[1]]
            print(f"RESULT {bug.kernel} max_error={float(np.nanmax(np.abs(P - exact))):.3g} "
                  f"nan={int(np.isnan(P).sum())}", flush=True)
        except cudacheck.KernelError as e:
            print(f"RESULT {bug.kernel} {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)


def sanitized(number, tool, timeout=90):
    """What compute-sanitizer's `tool` says of bug `number`: its summary line, or how it ended."""
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "2", sys.executable, __file__, "--gpu-run",
           str(number)]
    if tool is None:
        cmd = cmd[5:]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        text = out.stdout + out.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""
    summary = re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (.*)", text)
    results = re.findall(r"RESULT (.*)", text)
    trap = "trap" if re.search(r"trap|illegal instruction|Hardware Exception", text, re.I) else ""
    verdict = "; ".join(summary) or (trap or "no summary"), " | ".join(results)
    print(f"bug {number} {tool or 'alone'}: {verdict}", flush=True)   # as it comes, should the whole not finish
    return verdict


def sanitizer_table(jobs, numbers=None, timeout=90):
    from tiling_course import pipeline_bugs
    numbers = numbers or [0] + [b.number for b in pipeline_bugs.BUGS]
    with cf.ThreadPoolExecutor(jobs) as pool:
        runs = {(n, t): pool.submit(sanitized, n, t, timeout) for n in numbers for t in (None, *TOOLS)}
    lines = ["| bug | alone: result | " + " | ".join(TOOLS) + " |", "|---|---|" + "---|" * len(TOOLS)]
    for n in numbers:
        alone = runs[n, None].result()[1]
        cells = [runs[n, t].result()[0] for t in TOOLS]
        lines.append(f"| {n} | {alone} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--markdown", action="store_true", help="the checked-mode table as Markdown")
    ap.add_argument("--sanitizer", action="store_true", help="on a GPU: every bug under compute-sanitizer")
    ap.add_argument("--gpu-run", type=int, metavar="NUMBER", help="on a GPU: one bug once (0: none)")
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--numbers", type=int, nargs="+", help="with --sanitizer: only these bugs (0: none)")
    ap.add_argument("--timeout", type=float, default=90, help="with --sanitizer: seconds a run may take")
    ap.add_argument("--out", help="also write the table here")
    args = ap.parse_args()
    if args.gpu_run is not None:
        return gpu_run(args.gpu_run)
    if args.sanitizer:
        table = sanitizer_table(args.jobs, args.numbers, args.timeout)
    else:
        rows = list(checked_rows())
        if args.markdown:
            head = "| kind | bug | source | the slip | expected | checked mode | its message, first sentence |\n"
            table = head + "|---|---|---|---|---|---|---|\n" + "\n".join(
                f"| {b.kind} | {b.number} | {b.kernel} | {b.what} | {b.expected} | {got} | {msg} |"
                for b, got, msg in rows)
        else:
            table = "\n".join(f"{b.kind:4} {b.number:3} {b.kernel:19} expected {b.expected:22} got {got:22} {msg}"
                              for b, got, msg in rows)
        import cudacheck
        named = sum(got != "no finding" and issubclass(getattr(cudacheck, got), getattr(cudacheck, b.expected))
                    for b, got, _ in rows)
        table += f"\n\n{named} of {len(rows)} bugs named by the expected class."
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
