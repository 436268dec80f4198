"""Checked mode against NVIDIA's compute-sanitizer, kernel by kernel (run on a GPU).

For every wrong kernel of tiling_course.corpus and every correct kernel of the book, this
prints checked mode's verdict (CPU runtime) beside what each compute-sanitizer tool
(memcheck, racecheck, synccheck, initcheck) reports when the same source is launched
through CuPy on the GPU, and whether the GPU's unchecked result was wrong.

    python scripts/sanitizer_crosscheck.py [--out logs/sanitizer-crosscheck.md] [--jobs 8]

CuPy's memory pool is turned off in the launches, so that every array is its own
allocation and memcheck sees an access past its end.
"""
import argparse
import concurrent.futures as cf
import datetime
import re
import subprocess
import sys

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
CORRECT = {"tiled": (32, 32, 32, 16), "tiled_bounds": (20, 20, 20, 16), "tiled_dynamic": (20, 20, 20, 16),
           "naive": (20, 20, 20, 16), "coalescedMultiply": (32, 16, 32, 16), "sharedABMultiply": (32, 16, 32, 16),
           "simpleMultiply": (32, 16, 32, 16)}


def case(name):
    """A tiling_course.corpus.WrongKernel for a wrong or a correct kernel (no edits)."""
    from tiling_course import corpus
    if name in corpus.WRONG:
        return corpus.WRONG[name]
    return corpus.WrongKernel(name, name, "correct", (), CORRECT[name], "")


def child(name, backend):
    """Run one kernel once; print how far its result is from NumPy's."""
    import numpy as np

    import cudacheck
    if backend == "gpu":
        import cupy
        cupy.cuda.set_allocator(None)
    try:
        M, N, P = case(name).run(backend=backend, check=False, rng=np.random.default_rng(0))
        if backend == "gpu":
            P = P.get()
        err = float(np.abs(P - M.astype(np.float64) @ N).max())
        print(f"RESULT max_error={err:.3g}")
    except cudacheck.KernelError as e:
        print(f"RESULT {type(e).__name__}")


def checked_verdict(name):
    import cudacheck
    try:
        case(name).run(backend="cpu", check=True)
        return "no finding"
    except cudacheck.KernelError as e:
        d = getattr(e, "details", {})
        where = f" {d['array']}{list(d['index'])}" if "index" in d else ""
        who = (f" t{d['thread'][:2]} b{d['block'][:2]}" if "thread" in d
               else f" b{d['block'][:2]}" if "block" in d else "")
        return f"{type(e).__name__.replace('Error', '')}{where}{who}"


def sanitize(name, tool):
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "3", sys.executable, __file__, "--child", name]
    if tool == "racecheck":
        cmd[3:3] = ["--racecheck-report", "hazard"]
    if tool == "synccheck":
        pass
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    m = re.search(r"ERROR SUMMARY: (\d+) error", out)
    hazards = re.search(r"RACECHECK SUMMARY: (\d+) hazard", out)
    count = int(m.group(1)) if m else None
    first = re.search(r"========= (?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY)(\S.*)", out)
    summary = f"{count} errors" if count is not None else "no summary"
    if hazards:
        summary = f"{hazards.group(1)} hazards"
    detail = first.group(1).strip()[:90] if first and (count or hazards) else ""
    return summary, detail, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child")
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--out")
    ap.add_argument("--raw")
    ap.add_argument("--jobs", type=int, default=8)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.backend)
    from tiling_course import corpus
    names = list(corpus.WRONG) + list(CORRECT)
    rows, raw = {}, []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futs = {(n, t): pool.submit(sanitize, n, t) for n in names for t in TOOLS}
        plain = {n: pool.submit(subprocess.run, [sys.executable, __file__, "--child", n], capture_output=True,
                                text=True, timeout=600) for n in names}
        for n in names:
            rows[n] = {t: futs[(n, t)].result() for t in TOOLS}
            res = re.search(r"RESULT (.*)", plain[n].result().stdout)
            rows[n]["gpu"] = res.group(1) if res else plain[n].result().stderr[-200:]
    import cupy
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    ver = subprocess.run(["compute-sanitizer", "--version"], capture_output=True,
                         text=True).stdout.strip().splitlines()[-1]
    lines = ["# Checked mode against compute-sanitizer", "",
             f"{dev}, {ver}, CuPy {cupy.__version__}, {datetime.date.today()}. "
             f"Command: `python scripts/sanitizer_crosscheck.py`.", "",
             "| kernel | checked mode (CPU) | GPU result, unchecked | " + " | ".join(TOOLS) + " |",
             "|---|---|---|" + "---|" * len(TOOLS)]
    for n in names:
        cells = [checked_verdict(n), rows[n]["gpu"]] + [rows[n][t][0] for t in TOOLS]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
        for t in TOOLS:
            raw.append(f"## {n} / {t}\n{rows[n][t][2]}")
    lines += ["", "First report of each tool that found something:", ""]
    for n in names:
        for t in TOOLS:
            if rows[n][t][1]:
                lines.append(f"- {n}, {t}: `{rows[n][t][1]}`")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        open(a.out, "w").write(text)
    if a.raw:
        open(a.raw, "w").write("\n".join(raw))


if __name__ == "__main__":
    main()
