"""tiling_course.warps against the GPU's own counters (run on a GPU with Nsight Compute).

For each case (a kernel of the book, or a variant of one, at one tile and Width), this
prints what the warp lesson computes from a checked-mode trace of every block (global
load and store requests and their 32-byte sectors; shared load and store requests and
their passes through the banks) beside what `ncu` counts when the same source runs once
on the GPU. Where the compiler emits fewer, wider instructions than the source has
accesses (a float4 of shared words, say), the request counts differ while the sectors
and the excess passes (the conflicts) should not.

    python scripts/warps_crosscheck.py [--out logs/warps-crosscheck.md]
"""
import argparse
import csv
import datetime
import io
import subprocess
import sys

WIDTH = 64
# (label, kernel, tile, edits of its source)
SWAP = [("blockDim.y + threadIdx.y;", "blockDim.y + threadIdx.x;"),
        ("blockDim.x + threadIdx.x;", "blockDim.x + threadIdx.y;")]
CASES = [
    ("naive, 16 x 16 blocks", "naive", 16, ()),
    ("naive, row from threadIdx.x", "naive", 16, SWAP),
    ("tiled, tile 16", "tiled", 16, ()),
    ("tiled, tile 32", "tiled", 32, ()),
    ("tiled_transposed, tile 32, PAD 0", "tiled_transposed", 32, ()),
    ("tiled_transposed, tile 32, PAD 1", "tiled_transposed", 32, (("#define PAD 0", "#define PAD 1"),)),
    ("tiled_transposed, tile 16, PAD 1", "tiled_transposed", 16, (("#define PAD 0", "#define PAD 1"),)),
]
METRICS = {
    "global ld requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global ld sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global st requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "global st sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "shared ld requests": "smsp__inst_executed_op_shared_ld.sum",
    "shared ld passes": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared st requests": "smsp__inst_executed_op_shared_st.sum",
    "shared st passes": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}


def source(kernel, edits):
    from tiling_course import matmul
    return matmul.apply_edits(matmul.source(kernel), edits, "warps_crosscheck", kernel)


def predicted(kernel, tile, edits):
    """The counts of every block's warp requests, from one checked run tracing all blocks."""
    import numpy as np

    from tiling_course import matmul, warps
    rng = np.random.default_rng(0)
    M, N = (rng.uniform(-1, 1, (WIDTH, WIDTH)).astype(np.float32) for _ in range(2))
    grid = matmul.geometry(kernel, WIDTH, WIDTH, WIDTH, tile)[0]
    blocks = [(x, y) for y in range(grid[1]) for x in range(grid[0])]
    _, fn = matmul.run(M, N, kernel, tile, "cpu", code=source(kernel, edits), check=True, trace=blocks)
    assert not fn.last_launch.trace_truncated
    out = dict.fromkeys(METRICS, 0)
    for r in warps.requests(fn.last_launch):
        op = "ld" if r.op == "R" else "st"
        out[f"{r.space} {op} requests"] += 1
        out[f"{r.space} {op} {'sectors' if r.space == 'global' else 'passes'}"] += (
            r.sectors if r.space == "global" else r.passes)
    return out


def child(kernel, tile, edits):
    """Run the case once on the GPU (what ncu profiles)."""
    import numpy as np

    from tiling_course import matmul
    rng = np.random.default_rng(0)
    M, N = (rng.uniform(-1, 1, (WIDTH, WIDTH)).astype(np.float32) for _ in range(2))
    P, _ = matmul.run(M, N, kernel, tile, "gpu", code=source(kernel, edits))
    err = float(abs(P.get() - M.astype(np.float64) @ N).max())
    assert err < 1e-4, err


def measured(index):
    cmd = ["ncu", "--csv", "--metrics", ",".join(METRICS.values()), "--kernel-name", "regex:matmul",
           sys.executable, __file__, "--child", str(index)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rows = [r for r in csv.reader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):])) if r]
    if proc.returncode != 0 or len(rows) < 2:
        raise RuntimeError(f"ncu failed ({proc.returncode}):\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    head = rows[0]
    name_at, value_at = head.index("Metric Name"), head.index("Metric Value")
    values = {r[name_at]: float(r[value_at].replace(",", "")) for r in rows[1:]}
    return {label: values.get(metric) for label, metric in METRICS.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--child", type=int)
    args = ap.parse_args(argv)
    if args.child is not None:
        _, kernel, tile, edits = CASES[args.child]
        return child(kernel, tile, edits)
    lines = [f"# tiling_course.warps against Nsight Compute, Width {WIDTH}",
             f"{datetime.date.today()}; predicted from checked-mode traces of every block / measured by ncu.", "",
             "| case | " + " | ".join(METRICS) + " |", "|---" * (len(METRICS) + 1) + "|"]
    for i, (label, kernel, tile, edits) in enumerate(CASES):
        p = predicted(kernel, tile, edits)
        try:
            m = measured(i)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            m = dict.fromkeys(METRICS)
            print(f"{label}: {e}", file=sys.stderr)
        cells = [f"{p[k]:,} / {'–' if m[k] is None else f'{m[k]:,.0f}'}" for k in METRICS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
