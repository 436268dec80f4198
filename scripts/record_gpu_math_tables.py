"""On a GPU: measure the special-function unit's approximations that expf, tanhf, rsqrtf,
__expf, __sinf, __cosf and fast math's sqrtf compile to (PTX ex2.approx.ftz, rcp.approx.ftz,
rsqrt.approx, sin.approx, cos.approx, sqrt.approx), on every input one table covers, check on every other input that
the table and its rule (a power of two; the sine's quadrants) give the GPU's result, and
write the tables the CPU runtime looks up (cudacheck/cpu/gpumath.py says how they are
stored) and a report.

    python scripts/record_gpu_math_tables.py --data runtime/cudacheck/cpu/data \
        --report logs/DATE-DEVICE-gpu-math-tables.md
"""
import argparse
import datetime
import subprocess
import sys
from pathlib import Path

import numpy as np

from cudacheck import encode_gpu_math_tables

KERNELS = r'''
#define OP(name, instruction) extern "C" __global__ void name(const unsigned* in, float* out, unsigned n) { \
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; \
    if (i < n) { float r; asm(instruction " %0, %1;" : "=f"(r) : "f"(__uint_as_float(in[i]))); out[i] = r; } }
OP(k_ex2_ftz, "ex2.approx.ftz.f32")
OP(k_rcp_ftz, "rcp.approx.ftz.f32")
OP(k_rsqrt, "rsqrt.approx.f32")
OP(k_rsqrt_ftz, "rsqrt.approx.ftz.f32")
OP(k_sqrt, "sqrt.approx.f32")
OP(k_sqrt_ftz, "sqrt.approx.ftz.f32")
OP(k_sin_ftz, "sin.approx.ftz.f32")
OP(k_sin, "sin.approx.f32")
OP(k_cos_ftz, "cos.approx.ftz.f32")
OP(k_cos, "cos.approx.f32")
// The quarter wave: every x in [0, pi/2] writes sin.approx(x) at T, the fraction of
// x * 1/(2 pi) (rounded toward zero) in 25 fixed-point bits; x's that share a T and disagree
// are counted. Every T below 2^23 is reached: consecutive x are less than 2^-25 turns apart.
extern "C" __global__ void k_quarter(unsigned n, unsigned* q, unsigned long long* conflicts) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(i), r;
    unsigned T = (unsigned)(double(__fmul_rz(x, __uint_as_float(0x3E22F983u))) * 33554432.0);
    if (T >= (1u << 23)) return;
    asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    unsigned old = atomicCAS(&q[T], 0xFFFFFFFFu, __float_as_uint(r));
    if (old != 0xFFFFFFFFu && old != __float_as_uint(r)) atomicAdd(conflicts, 1ull);
}
'''
# The PTX that nvcc makes of the functions the CPU runtime reproduces around these instructions.
FUNCTIONS = r'''
extern "C" __global__ void f(const float* x, float* y) {
    y[0] = expf(x[0]); y[1] = tanhf(x[1]); y[2] = rsqrtf(x[2]); y[3] = __expf(x[3]);
    y[4] = rnorm3df(x[4], x[5], x[6]); y[5] = log1pf(x[7]); y[6] = logf(x[8]); __sincosf(x[9], &y[7], &y[8]);
}
'''


def sine_rule(xp, quarter, bits, cosine):
    """sin.approx (cos.approx: cosine) of the floats whose bit patterns are `bits` (uint32),
    by the rule cudacheck/cpu/gpumath.py states, from the quarter wave (float32, 2^23); xp is
    NumPy or CuPy."""
    x = bits.view(xp.float32)
    t = xp.abs(x.astype(xp.float64)) * float(np.uint32(0x3E22F983).view(np.float32))   # exact
    tf = t.astype(xp.float32)
    tf = xp.where(tf.astype(xp.float64) > t, xp.nextafter(tf, xp.float32(0)), tf).astype(xp.float64)
    T = xp.floor((tf - xp.floor(tf)) * 2.0 ** 25).astype(xp.int64)
    if cosine:
        T = (T + (1 << 23)) & ((1 << 25) - 1)
    quadrant, r = T >> 23, T & ((1 << 23) - 1)
    r = xp.where(quadrant & 1, (1 << 23) - 1 - r, r)
    negative = quadrant >= 2
    if not cosine:
        negative = negative ^ (bits >= 0x80000000)
    v = xp.where(negative, -quarter[r], quarter[r]).astype(xp.float32)
    return xp.where(xp.isfinite(x), v, xp.float32(np.nan))


def main():
    import cupy as cp
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="the folder the tables' files are written to")
    ap.add_argument("--report", required=True)
    opts = ap.parse_args()
    mod = cp.RawModule(code=KERNELS)

    def run(name, bits):
        bits = cp.asarray(bits, dtype=cp.uint32)
        out = cp.empty(bits.size, dtype=cp.float32)
        mod.get_function("k_" + name)(((bits.size + 255) // 256,), (256,), (bits, out, np.uint32(bits.size)))
        return out

    grid = (cp.arange(1 << 23, dtype=cp.float64) * 2.0 ** -23).astype(cp.float32)   # f / 2^23, exact
    one = 127 << 23
    measured = {"ex2_pos": run("ex2_ftz", grid.view(cp.uint32)), "ex2_neg": run("ex2_ftz", (-grid).view(cp.uint32)),
                "rcp": run("rcp_ftz", cp.arange(one, one + (1 << 23), dtype=cp.uint32)),
                "rsqrt": run("rsqrt", cp.arange(one, one + (1 << 24), dtype=cp.uint32)),
                "sqrt": run("sqrt", cp.arange(one, one + (1 << 24), dtype=cp.uint32))}
    checks = []   # (what, inputs, how many differ)

    def differ(name, bits, expect):
        got = run(name, bits)
        same = (got.view(cp.uint32) == expect.view(cp.uint32)) | (cp.isnan(got) & cp.isnan(expect))
        return int(bits.size - cp.count_nonzero(same))

    # ex2: every float with |x| < 130 of both signs: 2^+-i times the table's entry for f.
    tp, tn = measured["ex2_pos"].astype(cp.float64), measured["ex2_neg"].astype(cp.float64)
    for sign in (0, 0x80000000):
        bad = total = 0
        for start in range(0, 0x43020000, 1 << 26):
            bits = cp.arange(start, min(start + (1 << 26), 0x43020000), dtype=cp.uint32) | sign
            x = bits.view(cp.float32).astype(cp.float64)
            fixed = cp.floor(cp.abs(x) * 2.0 ** 23).astype(cp.int64)
            i, f = (fixed >> 23).astype(cp.float64), fixed & ((1 << 23) - 1)
            v = (tn[f] * cp.exp2(-i) if sign else tp[f] * cp.exp2(i)).astype(cp.float32)
            v = cp.where(cp.abs(v) < np.float32(2.0 ** -126), cp.float32(0), v)
            bad += differ("ex2_ftz", bits, v)
            total += bits.size
        checks.append((f"ex2.approx.ftz, every {'negative' if sign else 'positive'} float of magnitude below 130",
                       total, bad))
    # rcp: every normal float m * 2^e, both signs.
    t = measured["rcp"].astype(cp.float64)
    bad = total = 0
    for e in range(-126, 128):
        for sign in (0, 0x80000000):
            bits = cp.arange(one, one + (1 << 23), dtype=cp.uint32) + cp.uint32((e % 256) << 23) if e >= 0 else \
                cp.arange(one, one + (1 << 23), dtype=cp.uint32) - cp.uint32((-e) << 23)
            v = (t * 2.0 ** -e).astype(cp.float32)
            v = cp.where(v < np.float32(2.0 ** -126), cp.float32(0), v)
            bad += differ("rcp_ftz", bits | sign, -v if sign else v)
            total += bits.size
    checks.append(("rcp.approx.ftz, every normal float", total, bad))
    # rsqrt and sqrt: every positive normal float m * 4^e gives the table's entry for m times
    # 2^-e (2^e), .ftz or not; a subnormal x gives, without .ftz, the rule's result for x * 2^24
    # times 2^12 (2^-12), and with .ftz that of zero.
    def root_rule(name, bits):
        k = ((bits >> 23).astype(cp.int64) - 127) >> 1   # x = m * 4^k, m in [1, 4)
        index = bits.astype(cp.int64) - (k << 24) - one
        scale = cp.exp2((-k if name == "rsqrt" else k).astype(cp.float64))
        return (measured[name][index].astype(cp.float64) * scale).astype(cp.float32)

    for name in ("rsqrt", "rsqrt_ftz", "sqrt", "sqrt_ftz"):
        table = name.split("_")[0]
        bad = total = 0
        for e in range(-63, 64):
            bits = cp.arange(one, one + (1 << 24), dtype=cp.uint32).astype(cp.int64) + (2 * e << 23)
            bits = bits[(bits >= (1 << 23)) & (bits < (255 << 23))].astype(cp.uint32)
            bad += differ(name, bits, root_rule(table, bits))
            total += bits.size
        instruction = f"{table}.approx" + (".ftz" if name.endswith("ftz") else "")
        checks.append((f"{instruction}, every positive normal float", total, bad))
        tiny = cp.arange(1, 1 << 23, dtype=cp.uint32)
        if name.endswith("ftz"):
            expect = cp.full(tiny.size, cp.inf if table == "rsqrt" else 0, dtype=cp.float32)
            rule = "that of zero"
        else:
            # on the host: CuPy's elementwise product flushes subnormal operands to zero
            scaled = cp.asarray((cp.asnumpy(tiny).view(np.float32) * np.float32(2.0 ** 24)).view(np.uint32))
            back = cp.float32(2.0 ** (12 if table == "rsqrt" else -12))
            expect = (root_rule(table, scaled) * back).astype(cp.float32)
            rule = "the rule's for x 2^24, scaled back by 2^12"
        checks.append((f"{instruction}, every positive subnormal float: {rule}", tiny.size, differ(name, tiny, expect)))
    # the sine's quarter wave, and its rule on every float of both signs, sine and cosine,
    # .ftz and not
    q = cp.full(1 << 23, 0xFFFFFFFF, dtype=cp.uint32)
    conflicts = cp.zeros(1, dtype=cp.uint64)
    n = 0x3FC90FDC   # every float up to just above pi/2
    mod.get_function("k_quarter")(((n + 255) // 256,), (256,), (np.uint32(n), q, conflicts))
    missing = int(cp.count_nonzero(q == 0xFFFFFFFF))
    checks.append(("sin.approx.ftz on [0, pi/2]: inputs of one quarter-wave entry that disagree, entries never "
                   "reached", n, int(conflicts[0]) + missing))
    measured["sine"] = q.view(cp.float32)
    quarter = measured["sine"]

    for name in ("sin_ftz", "sin", "cos_ftz", "cos"):
        bad = total = 0
        for start in range(0, 1 << 32, 1 << 26):
            bits = cp.arange(start, start + (1 << 26), dtype=cp.uint64).astype(cp.uint32)
            bad += differ(name, bits, sine_rule(cp, quarter, bits, name.startswith("cos")))
            total += bits.size
        instruction = name.split("_")[0] + ".approx" + (".ftz" if name.endswith("ftz") else "")
        checks.append((f"{instruction}, every float (the quarter wave and its quadrant rule)", total, bad))
    files = encode_gpu_math_tables({k: cp.asnumpy(v) for k, v in measured.items()})
    for file, blob in files.items():
        (Path(opts.data) / file).write_bytes(blob)
    src = Path("/tmp/gpu_math_functions.cu")
    src.write_text(FUNCTIONS)
    ptx = subprocess.run(["nvcc", "-arch=sm_90", "-ftz=true", "-ptx", str(src), "-o", "-"], capture_output=True,
                         text=True).stdout
    plain = subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(src), "-o", "-"], capture_output=True, text=True).stdout
    same = plain.replace(".ftz", "") == ptx.replace(".ftz", "")
    kept = sorted({line.split()[0] for line in plain.splitlines() if ".ftz" in line})
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    props = cp.cuda.runtime.getDeviceProperties(0)
    lines = [f"# The special-function unit's approximations, measured: {props['name'].decode()}, "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             "", f"CuPy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
             f"driver {cp.cuda.runtime.driverGetVersion()}, {nvcc}. "
             f"Command: `python scripts/record_gpu_math_tables.py --data {opts.data} --report {opts.report}`.",
             "", "Tables written: " + ", ".join(f"{opts.data}/{file}, {len(blob):,} bytes"
                                               for file, blob in files.items()) + ".",
             "", "| check: the table and its rule give the GPU's result | inputs | differ |", "|---|---:|---:|"]
    lines += [f"| {what} | {n:,} | {bad:,} |" for what, n, bad in checks]
    lines += ["", "PTX of expf, tanhf, rsqrtf, __expf, rnorm3df, log1pf, logf, __sincosf "
              "(nvcc -arch=sm_90 -ftz=true, as CuPy compiles):", "",
              "```", ptx.split(".entry")[-1].strip() if ".entry" in ptx else ptx, "```", "",
              "Without -ftz=true (nvcc's default, as whole programs compile), the PTX is "
              + (f"the same but for .ftz, which only {', '.join(kept) or 'no instruction'} keep." if same else "this:"),
              ""]
    if not same:
        lines += ["```", plain.split(".entry")[-1].strip(), "```", ""]
    Path(opts.report).write_text("\n".join(lines))
    print("\n".join(lines[:12 + len(checks)]))
    return 1 if any(bad for _, _, bad in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
