"""On a GPU: measure lg2.approx.f32 (what __logf, __log2f, __log10f and, under --use_fast_math,
logf, log2f and log10f compile to), check on every input the rule that lets two binades' results
and a bitmap per result binade give all of them, and write the CPU runtime's table
(cudacheck.encode_gpu_lg2_table) and a report.

    python scripts/record_gpu_lg2_table.py --data runtime/cudacheck/cpu/data --report logs/DATE-DEVICE-lg2.md

The rule (found on an H200, 2026-12-06): for x = 2^e (1 + m 2^-23), lg2.approx(x) is T0[m] for
e = 0 and T1[m] for e = -1, the GPU's own results on [1, 2) and [1/2, 1); for any other e it is
e + L[m] rounded toward zero, L[m] = T0[m] where T0[m] < 1/2 and 1 + T1[m] otherwise, then one
unit lower in its bit pattern for the m of a set that depends only on the result's binade: for
e > 0 the binade of e (k = floor(log2 e)), for e < 0 that of -e - 1. A subnormal x (not flushed:
lg2.approx.f32 without .ftz) gives lg2.approx(x 2^24) - 24, rounded to nearest (an H100, 2026-12-07).
The .ftz form gives the same results for normal x, and -inf for a subnormal one.
"""
import argparse
import datetime
import subprocess

import numpy as np

from cudacheck import GPU_LG2_BINADES, encode_gpu_lg2_table

KERNEL = r'''
extern "C" __global__ void lg2(const unsigned* in, float* out, unsigned n, int ftz) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(in[i]), r;
    if (ftz) asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    else asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    out[i] = r;
}
'''
N = 1 << 23


def main():
    import cupy as cp
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="the folder the table's file is written to")
    ap.add_argument("--report", required=True)
    opts = ap.parse_args()
    kernel = cp.RawKernel(KERNEL, "lg2")
    m = cp.arange(N, dtype=cp.uint32)

    def run(bits, ftz):
        out = cp.empty(bits.size, dtype=cp.float32)
        kernel(((bits.size + 255) // 256,), (256,), (bits, out, np.uint32(bits.size), np.int32(ftz)))
        return out

    def binade(e):
        return m | cp.uint32((e + 127) << 23)

    def toward_zero(v):   # float64 -> float32 rounded toward zero
        f = v.astype(cp.float32)
        return cp.where(cp.abs(f.astype(cp.float64)) > cp.abs(v), cp.nextafter(f, cp.float32(0)), f)

    lines = []
    t0, t1 = run(binade(0), 1), run(binade(-1), 1)
    for ftz in (0,):
        same = [int(cp.count_nonzero(run(binade(e), ftz).view(cp.uint32) != t.view(cp.uint32))) for e, t in
                ((0, t0), (-1, t1))]
        lines.append(f"T0 and T1 of lg2.approx.f32 against lg2.approx.ftz.f32: {same} results differ")
    L = cp.where(t0 < 0.5, t0.astype(cp.float64), 1.0 + t1.astype(cp.float64))

    def klass(e):
        return GPU_LG2_BINADES.index(("p" if e > 0 else "n") + str(1 << (int(e if e > 0 else -e - 1).bit_length() - 1)))

    fixes = [None] * len(GPU_LG2_BINADES)
    checked = {}
    order = [e for e in range(-126, 128) if e not in (0, -1)]
    order.sort(key=lambda e: abs(e))   # the first e of each class sets its bitmap; the others check it
    for e in order:
        k = klass(e)
        rule = toward_zero(e + L)
        for ftz in (1, 0):
            got = run(binade(e), ftz)
            low = got.view(cp.uint32).astype(cp.int64) - rule.view(cp.uint32).astype(cp.int64)
            if fixes[k] is None:
                if not bool(cp.all((low == 0) | (low == -1))):
                    raise SystemExit(f"e = {e}: results differ from the rule by other than one unit")
                fixes[k] = low == -1
            bad = int(cp.count_nonzero(low != -fixes[k].astype(cp.int64)))
            checked.setdefault(GPU_LG2_BINADES[k], [0, 0, []])
            checked[GPU_LG2_BINADES[k]][0] += N
            checked[GPU_LG2_BINADES[k]][1] += bad
            checked[GPU_LG2_BINADES[k]][2].append(e)
    # A subnormal x = j 2^-149 (lg2.approx.f32 without .ftz): the GPU's code scales it by 2^24 into
    # the normal range, takes lg2.approx of that and subtracts 24, rounding to nearest (the SASS on
    # an H100, 2026-12-07: FMUL by 2^24, MUFU.LG2, FADD -24 under a predicate). Checked against the
    # GPU's own results for the scaled inputs.
    j = cp.arange(1, N, dtype=cp.uint32)
    got = run(j, 0)
    # the product on the host: CuPy's elementwise kernels flush a subnormal operand to zero
    scaled = run(cp.asarray((cp.asnumpy(j).view(np.float32) * np.float32(1 << 24)).view(np.uint32)), 0)
    expect = scaled - cp.float32(24)
    differ = got.view(cp.uint32) != expect.view(cp.uint32)
    sub_bad = int(cp.count_nonzero(differ))
    examples = [f"x bits {int(b):#010x}: GPU {float(g)!r}, lg2(x 2^24) - 24 = {float(x)!r}"
                for b, g, x in zip(j[differ][:5].tolist(), got[differ][:5].tolist(), expect[differ][:5].tolist())]
    flushed = run(j, 1)
    sub_ftz = int(cp.count_nonzero(~cp.isneginf(flushed)))
    missing = [c for c, fx in zip(GPU_LG2_BINADES, fixes) if fx is None]
    if missing:
        raise SystemExit(f"no input reached the result binades {missing}")
    (name, data), = encode_gpu_lg2_table(cp.asnumpy(t0.view(cp.uint32)), cp.asnumpy(t1.view(cp.uint32)),
                                          {c: cp.asnumpy(x) for c, x in zip(GPU_LG2_BINADES, fixes)}).items()
    path = f"{opts.data}/{name}"
    with open(path, "wb") as out:
        out.write(data)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    report = [f"# lg2.approx.f32 measured on {gpu}, {datetime.date.today()}", "",
              "    python scripts/record_gpu_lg2_table.py --data ... --report ...", "", *lines, "",
              "| result binade | exponents e checked (both forms) | inputs | differ from the rule | one unit lower |",
              "|---|---|---|---|---|"]
    for c in GPU_LG2_BINADES:
        total, bad, es = checked[c]
        report.append(f"| {c} | {min(es)}..{max(es)} ({len(set(es))}) | {total:,} | {bad:,} | "
                      f"{int(fixes[GPU_LG2_BINADES.index(c)].sum()):,} |")
    report += ["", f"Subnormal inputs (lg2.approx.f32): {N - 1:,}, {sub_bad:,} differ from lg2.approx(x 2^24) - 24 "
               f"rounded to nearest; lg2.approx.ftz.f32 gives -inf for {N - 1 - sub_ftz:,} of them.", *examples,
               f"Table written: {path}, {len(data):,} bytes."]
    with open(opts.report, "w") as out:
        out.write("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
