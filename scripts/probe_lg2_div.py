"""On a GPU: how lg2.approx and div.approx (what __logf, __log2f and __fdividef compile to) relate
to a table of one binade and to rcp.approx, over every float (lg2) and over many pairs (div).

    python scripts/probe_lg2_div.py --out DIR
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import cupy
import numpy as np

KERNELS = r'''
__device__ float lg2(float x, int ftz) {
    float r;
    if (ftz) asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    else asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
extern "C" __global__ void table(float* t, int ftz) {
    unsigned m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m < (1u << 23)) t[m] = lg2(__uint_as_float(0x3F800000u | m), ftz);
}
extern "C" __global__ void table_half(float* t, int ftz) {   // the [1/2, 1) binade
    unsigned m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m < (1u << 23)) t[m] = lg2(__uint_as_float(0x3F000000u | m), ftz);
}
// Every non-negative finite float x = 1.m * 2^e (subnormals normalised): does lg2(x) equal
// e + T[m] rounded once? Counts of mismatches per biased exponent (0: subnormals), and a
// histogram of the difference in ulps (-8..8, clamped).
extern "C" __global__ void check(const float* T, unsigned long long base, int ftz,
                                 unsigned long long* bad, unsigned long long* hist, unsigned* example) {
    unsigned long long i = base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 0x7F800000ull || i == 0) return;
    unsigned u = (unsigned)i;
    float x = __uint_as_float(u);
    float r = lg2(x, ftz);
    int be = u >> 23;
    int e; unsigned m;
    if (be) { e = be - 127; m = u & 0x7FFFFFu; }
    else {
        if (ftz) return;
        int lz = __clz(u) - 8;            // u < 2^23: shift until bit 23 is set
        m = (u << (lz + 1)) & 0x7FFFFFu;
        e = -126 - (lz + 1);
    }
    float c = __fadd_rn((float)e, T[m]);
    if (__float_as_uint(r) != __float_as_uint(c)) {
        atomicAdd(&bad[be], 1ull);
        int d = (int)__float_as_uint(r) - (int)__float_as_uint(c);
        if (signbit(r) != signbit(c)) d = 99;
        d = d < -8 ? -8 : (d > 8 ? 8 : d);
        atomicAdd(&hist[d + 8], 1ull);
        atomicCAS(&example[be], 0u, u);
    }
}
// The rule lg2(1.m * 2^e) = round-toward-zero(e + L[m]) for a fixed-point L: L from the [1, 2)
// binade's results T0 where they are below 1/2, else 1 + the [1/2, 1) binade's (T1), which keep
// more of L's bits; counts of mismatches by biased exponent and of the difference in ulps.
extern "C" __global__ void rule(const float* T0, const float* T1, unsigned long long base, int ftz,
                                unsigned long long* bad, unsigned long long* hist) {
    unsigned long long i = base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 0x7F800000ull || i == 0) return;
    unsigned u = (unsigned)i;
    float r = lg2(__uint_as_float(u), ftz);
    int be = u >> 23, e;
    unsigned m;
    if (be) { e = be - 127; m = u & 0x7FFFFFu; }
    else {
        if (ftz) return;
        int lz = __clz(u) - 8;
        m = (u << (lz + 1)) & 0x7FFFFFu;
        e = -126 - (lz + 1);
    }
    double L = T0[m] < 0.5f ? (double)T0[m] : 1.0 + (double)T1[m];
    float c = __double2float_rz((double)e + L);
    if (__float_as_uint(r) != __float_as_uint(c)) {
        atomicAdd(&bad[be], 1ull);
        int d = (int)__float_as_uint(r) - (int)__float_as_uint(c);
        d = d < -8 ? -8 : (d > 8 ? 8 : d);
        atomicAdd(&hist[d + 8], 1ull);
    }
}
extern "C" __global__ void div(const float* x, const float* y, unsigned n, unsigned long long* bad, unsigned* ex) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], d, df, r, rf, c, cf;
    asm("div.approx.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(df) : "f"(a), "f"(b));
    asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(b));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rf) : "f"(b));
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(c) : "f"(a), "f"(r));
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(cf) : "f"(a), "f"(rf));
    bool nan = isnan(d) && isnan(c), nanf = isnan(df) && isnan(cf);
    if (!nan && __float_as_uint(d) != __float_as_uint(c)) { atomicAdd(&bad[0], 1ull); atomicCAS(&ex[0], 0u, i); }
    if (!nanf && __float_as_uint(df) != __float_as_uint(cf)) { atomicAdd(&bad[1], 1ull); atomicCAS(&ex[1], 0u, i); }
    // the same with the quotient's reciprocal taken from the ftz table (flushing b's subnormal)
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(c) : "f"(a), "f"(rf));
    if (!nan && __float_as_uint(d) != __float_as_uint(c)) atomicAdd(&bad[2], 1ull);
}
// div.full.f32 against a * rcp.approx(b); sqrt.approx against x * rsqrt.approx(x) and rcp(rsqrt)
extern "C" __global__ void full(const float* x, const float* y, unsigned n, unsigned long long* bad) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], d, df, r, rf, c, cf, s, sf, q, t1, t2, t3;
    asm("div.full.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(df) : "f"(a), "f"(b));
    asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(b));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rf) : "f"(b));
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(c) : "f"(a), "f"(r));
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(cf) : "f"(a), "f"(rf));
    if (!(isnan(d) && isnan(c)) && __float_as_uint(d) != __float_as_uint(c)) atomicAdd(&bad[0], 1ull);
    if (!(isnan(df) && isnan(cf)) && __float_as_uint(df) != __float_as_uint(cf)) atomicAdd(&bad[1], 1ull);
    float v = fabsf(a);
    asm("sqrt.approx.f32 %0, %1;" : "=f"(s) : "f"(v));
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(sf) : "f"(v));
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(q) : "f"(v));
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(t1) : "f"(v), "f"(q));
    asm("rcp.approx.f32 %0, %1;" : "=f"(t2) : "f"(q));
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(v));
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(t3) : "f"(v), "f"(q));
    if (__float_as_uint(s) != __float_as_uint(t1)) atomicAdd(&bad[2], 1ull);
    if (__float_as_uint(s) != __float_as_uint(t2)) atomicAdd(&bad[3], 1ull);
    if (__float_as_uint(sf) != __float_as_uint(t3)) atomicAdd(&bad[4], 1ull);
}
// ex2.approx.f32 (no ftz) where the result is subnormal: against the ftz table's 2^(x+64)
// scaled by 2^-64, rounded to nearest (c1) and truncated (c2).
extern "C" __global__ void ex2_sub(unsigned long long base, unsigned long long* bad) {
    unsigned long long i = base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned u = 0xC2FC0000u + (unsigned)i;           // x from -126 down to about -170
    if (u >= 0xC32A0000u) return;
    float x = __uint_as_float(u), r, t;
    asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    float y = x + 64.0f;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(y));
    float c1 = __fmul_rn(t, 5.421010862427522e-20f);
    float c2 = __fmul_rz(t, 5.421010862427522e-20f);
    atomicAdd(&bad[0], 1ull);
    if (__float_as_uint(r) != __float_as_uint(c1)) atomicAdd(&bad[1], 1ull);
    if (__float_as_uint(r) != __float_as_uint(c2)) atomicAdd(&bad[2], 1ull);
    if (y != x + 64.0f) atomicAdd(&bad[3], 1ull);
}
extern "C" __global__ void div_out(const float* x, const float* y, unsigned n, float* d, float* df) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], q, qf;
    asm("div.approx.f32 %0, %1, %2;" : "=f"(q) : "f"(a), "f"(b));
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(qf) : "f"(a), "f"(b));
    d[i] = q; df[i] = qf;
}
'''

FUNCTIONS = r'''
extern "C" __global__ void f(const float* x, float* y) {
    y[0] = __logf(x[0]); y[1] = __log2f(x[1]); y[2] = __fdividef(x[2], x[3]); y[3] = __log10f(x[4]);
    y[4] = __powf(x[5], x[6]);
}
extern "C" __global__ void g(const float* x, float* y) {
    y[0] = x[0] / x[1]; y[1] = sqrtf(x[2]); y[2] = expf(x[3]); y[3] = logf(x[4]); y[4] = sinf(x[5]);
    y[5] = cosf(x[6]); y[6] = powf(x[7], x[8]); y[7] = 1.0f / x[9]; y[8] = rsqrtf(x[10]); y[9] = exp2f(x[11]);
    y[10] = log2f(x[12]); y[11] = tanhf(x[13]); y[12] = erff(x[14]); y[13] = x[15] * x[16] + x[17];
}
'''


def ptx(options):
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "f.cu"
        src.write_text(FUNCTIONS)
        out = subprocess.run(["nvcc", "-ptx", "-arch=sm_90", *options, str(src), "-o", "-"],
                             capture_output=True, text=True)
        return out.stdout + out.stderr


def save_table(T, path):
    """T's bits as differences from log2 in double rounded to float: int8 where they fit, the
    rest as (index, difference) pairs; xz-compressed."""
    import lzma
    m = np.arange(1 << 23, dtype=np.float64)
    ref = np.log2(1.0 + m / (1 << 23)).astype(np.float32)
    d = T.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64)
    big = np.nonzero(np.abs(d) > 127)[0]
    small = np.clip(d, -128, 127).astype(np.int8)
    small[big] = -128
    parts = (small, big.astype(np.int32), d[big].astype(np.int64))
    path.write_bytes(lzma.compress(b"".join(p.tobytes() for p in parts)))
    return len(big)


def lg2_rule(mod, ftz):
    T0 = cupy.empty(1 << 23, cupy.float32)
    T1 = cupy.empty(1 << 23, cupy.float32)
    mod.get_function("table")((1 << 15,), (256,), (T0, np.int32(ftz)))
    mod.get_function("table_half")((1 << 15,), (256,), (T1, np.int32(ftz)))
    bad = cupy.zeros(256, cupy.uint64)
    hist = cupy.zeros(17, cupy.uint64)
    chunk = 1 << 28
    for base in range(0, 0x7F800000, chunk):
        mod.get_function("rule")((chunk // 256,), (256,), (T0, T1, np.uint64(base), np.int32(ftz), bad, hist))
    bad, hist = cupy.asnumpy(bad), cupy.asnumpy(hist)
    return {"ftz": ftz, "mismatches": int(bad.sum()),
            "by_biased_exponent": {int(e): int(bad[e]) for e in np.nonzero(bad)[0]},
            "ulp_histogram_-8..8": [int(h) for h in hist]}


def lg2_probe(mod, ftz, out):
    T = cupy.empty(1 << 23, cupy.float32)
    mod.get_function("table")((1 << 15,), (256,), (T, np.int32(ftz)))
    bad = cupy.zeros(256, cupy.uint64)
    hist = cupy.zeros(17, cupy.uint64)
    example = cupy.zeros(256, cupy.uint32)
    chunk = 1 << 28
    for base in range(0, 0x7F800000, chunk):
        mod.get_function("check")((chunk // 256,), (256,), (T, np.uint64(base), np.int32(ftz), bad, hist, example))
    cupy.cuda.runtime.deviceSynchronize()
    name = "lg2.approx.ftz.f32" if ftz else "lg2.approx.f32"
    save_table(cupy.asnumpy(T), out / f"lg2_table_{'ftz' if ftz else 'noftz'}.xz")
    bad, hist, example = (cupy.asnumpy(a) for a in (bad, hist, example))
    return {"instruction": name, "mismatches": int(bad.sum()),
            "by_biased_exponent": {int(e): int(bad[e]) for e in np.nonzero(bad)[0]},
            "examples": {int(e): hex(int(example[e])) for e in np.nonzero(bad)[0][:40]},
            "ulp_histogram_-8..8": [int(h) for h in hist]}


def div_probe(mod, rng):
    n = 1 << 26
    samples = {}
    # random bits (NaNs and infinities included), then normal ranges, then y near the 2^126 edge
    def normal():   # normal floats of either sign
        return rng.integers(0x00800000, 0x7F000000, n, dtype=np.uint32) | (rng.integers(0, 2, n, dtype=np.uint32) << 31)

    kinds = {
        "random bits": (rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)),
        "normal": (normal(), normal()),
        "moderate": (rng.integers(0x30000000, 0x50000000, n, dtype=np.uint32),
                     rng.integers(0x30000000, 0x50000000, n, dtype=np.uint32)),
        "y over 2^125": (rng.integers(0x30000000, 0x50000000, n, dtype=np.uint32),
                         rng.integers(0x7E000000, 0x7F800000, n, dtype=np.uint32)),
        "subnormal y": (rng.integers(0x30000000, 0x50000000, n, dtype=np.uint32),
                        rng.integers(1, 0x00800000, n, dtype=np.uint32)),
    }
    for kind, (xb, yb) in kinds.items():
        x = cupy.asarray(xb.view(np.float32))
        y = cupy.asarray(yb.view(np.float32))
        bad = cupy.zeros(3, cupy.uint64)
        ex = cupy.zeros(2, cupy.uint32)
        mod.get_function("div")((n // 256,), (256,), (x, y, np.uint32(n), bad, ex))
        bad, ex = cupy.asnumpy(bad), cupy.asnumpy(ex)
        samples[kind] = {"pairs": n, "div.approx != x*rcp.approx": int(bad[0]),
                         "div.approx.ftz != x*rcp.approx.ftz (mul.ftz)": int(bad[1]),
                         "div.approx != x*rcp.approx.ftz": int(bad[2]),
                         "example": [hex(int(xb[ex[0]])), hex(int(yb[ex[0]]))] if bad[0] else None,
                         "example_ftz": [hex(int(xb[ex[1]])), hex(int(yb[ex[1]]))] if bad[1] else None}
        if kind == "moderate":
            d = cupy.empty(n, cupy.float32)
            df = cupy.empty(n, cupy.float32)
            mod.get_function("div_out")((n // 256,), (256,), (x, y, np.uint32(n), d, df))
            k = 1 << 20
            np.savez_compressed(Path(args.out) / "div_sample.npz", x=xb[:k], y=yb[:k],
                                d=cupy.asnumpy(d)[:k], df=cupy.asnumpy(df)[:k])
    x = cupy.asarray(kinds["normal"][0].view(np.float32))
    y = cupy.asarray(kinds["normal"][1].view(np.float32))
    bad = cupy.zeros(5, cupy.uint64)
    mod.get_function("full")((n // 256,), (256,), (x, y, np.uint32(n), bad))
    bad = [int(v) for v in cupy.asnumpy(bad)]
    samples["full and sqrt (normal pairs)"] = {
        "pairs": n, "div.full != a*rcp.approx": bad[0], "div.full.ftz != a*rcp.approx.ftz": bad[1],
        "sqrt.approx != x*rsqrt.approx": bad[2], "sqrt.approx != rcp(rsqrt)": bad[3],
        "sqrt.approx.ftz != x*rsqrt.approx.ftz": bad[4]}
    bad = cupy.zeros(4, cupy.uint64)
    for base in range(0, 0x00300000, 1 << 22):
        mod.get_function("ex2_sub")(((1 << 22) // 256,), (256,), (np.uint64(base), bad))
    bad = [int(v) for v in cupy.asnumpy(bad)]
    samples["ex2.approx (no ftz), subnormal results"] = {
        "inputs": bad[0], "!= ftz(x+64)*2^-64 rn": bad[1], "!= ftz(x+64)*2^-64 rz": bad[2], "x+64 inexact": bad[3]}
    return samples


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rule-only", action="store_true", help="only lg2's round-toward-zero rule")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mod = cupy.RawModule(code=KERNELS, options=("-std=c++17",))
    if args.rule_only:
        report = [lg2_rule(mod, ftz) for ftz in (1, 0)]
        (out / "lg2-rule.json").write_text(json.dumps(report, indent=1))
        print(json.dumps(report, indent=1))
        raise SystemExit(0)
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
              "lg2": [lg2_probe(mod, ftz, out) for ftz in (1, 0)],
              "div": div_probe(mod, np.random.default_rng(20261206))}
    (out / "probe.json").write_text(json.dumps(report, indent=1))
    for opts in ((), ("-use_fast_math",), ("-ftz=true",)):
        (out / f"ptx{''.join(opts) or '-default'}.ptx").write_text(ptx(opts))
    print(json.dumps(report, indent=1))
