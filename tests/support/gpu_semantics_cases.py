"""Kernels whose results C++ leaves undefined or computes otherwise than a GPU: float to
integer conversion out of range, shifts by the width or more, contraction of a*b + c into
one fused multiply-add, __activemask in divergent code, the math functions that run on the
special-function unit (expf, tanhf, rsqrtf, rnorm3df, __expf), cuRAND's device generators. Each
case's inputs are fixed (a seed), so that what an H100 computed for it is stored
(tests/data/gpu_semantics.json, by scripts/record_gpu_semantics.py) and the CPU runtime is
held to it bit for bit (tests/runtime/test_gpu_semantics.py)."""
from dataclasses import dataclass

import numpy as np

SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 127.5, 128.0, -128.5, 255.5, 256.0, 300.0, -300.0,
                    32767.5, 32768.0, -32769.0, 65535.5, 65536.0, 70000.0, -70000.0, 2147483520.0,
                    2147483648.0, -2147483648.0, -2147483904.0, 3e9, 4294967040.0, 4294967296.0, -1.0,
                    1e10, -1e10, 9.2233715e18, 9.223372e18, -9.223372e18, -9.3e18, 1.8446743e19,
                    1.9e19, 1e30, -1e30, np.inf, -np.inf, np.nan], np.float64)

INT_TYPES = {"int": np.int32, "unsigned": np.uint32, "long long": np.int64, "unsigned long long": np.uint64,
             "short": np.int16, "unsigned short": np.uint16, "signed char": np.int8, "unsigned char": np.uint8}


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    kernel: str
    grid: int
    block: int
    make_args: object      # () -> tuple of NumPy arrays and scalars; outputs are the arrays
    options: tuple = ()


def _conversion(src_type, dst, dtype, implicit):
    body = "o[i] = v[i];" if implicit else f"o[i] = ({dst})v[i];"
    source = (f'extern "C" __global__ void conv({dst}* o, const {src_type}* v, int n) {{\n'
              f'    int i = threadIdx.x; if (i < n) {body}\n}}\n')
    vals = SPECIAL.astype(np.float32 if src_type == "float" else np.float64)
    return Case(f"convert {src_type} to {dst}{' (implicit)' if implicit else ''}", source, "conv", 1, 64,
                lambda: (np.zeros(len(vals), dtype), vals.copy(), np.int32(len(vals))))


SHIFT_AMOUNTS = np.array([0, 1, 7, 31, 32, 33, 63, 64, 65, 100, -1, -32], np.int32)
SHIFTS = r'''
extern "C" __global__ void shifts(unsigned* u, int* s, unsigned long long* U, long long* S, const int* amount, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    int k = amount[i];
    long long kk = k;
    u[4 * i + 0] = 1u << k;
    u[4 * i + 1] = 0x80000001u >> k;
    unsigned x = 0xf0f0f0f0u; x <<= k; u[4 * i + 2] = x;
    u[4 * i + 3] = (unsigned char)200 << k;
    s[4 * i + 0] = -8 >> k;
    s[4 * i + 1] = 5 << k;
    int y = -1000; y >>= k; s[4 * i + 2] = y;
    s[4 * i + 3] = 0x40000000 >> kk;
    U[3 * i + 0] = 1ull << k;
    U[3 * i + 1] = ~0ull >> kk;
    U[3 * i + 2] = 3ull << (kk + 32);
    S[3 * i + 0] = -8ll >> k;
    S[3 * i + 1] = 7ll << kk;
    S[3 * i + 2] = (long long)-1 >> (kk + 32);
}
'''

# Each expression nvcc may contract, on operands of its own (products that the optimiser
# shares among several sums are contracted by nvcc only sometimes: runtime/README.md, Limitations).
FMA_EXPRESSIONS = [
    "a * b + c", "a * b - c", "c + a * b", "c - a * b", "a * b + c * d", "a * b - c * d",
    "(a * b) + c", "-(a * b) + c", "a * b + c + d", "c + d * a * b", "a * (b + c) + d",
    "a * b * c + d", "(a + c) * (b + d) - c",
]
FMA_STATEMENTS = [
    "float t = a * b; r = t + c;",
    "float s = c; for (int k = 0; k < 8; ++k) s += a * b * (float)k; r = s;",
    "r = d; r -= a * b;",
    "float m = a * b; r = (m + c) * m;",
    "r = c; r += a * b; r += c * d;",
]
_FMA_FORMS = [f"r = {e};" for e in FMA_EXPRESSIONS] + FMA_STATEMENTS
FMA = ('extern "C" __global__ void fma_forms(float* o, double* od, const float* x, int n) {\n'
       '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
       '    if (i >= n) return;\n'
       + "".join(f"    {{ const float* p = x + 4 * ({len(_FMA_FORMS)} * i + {e}); float a = p[0], b = p[1], c = p[2], "
                 f"d = p[3], r; {form} o[{len(_FMA_FORMS)} * i + {e}] = r; }}\n" for e, form in enumerate(_FMA_FORMS))
       + "    const float* p = x + 4 * i;\n"
       + "    double da = p[0], db = p[1], dc = p[2];\n"
       + "    od[3 * i] = da * db + dc; od[3 * i + 1] = dc - da * db; od[3 * i + 2] = (double)(p[0] * p[1]) + dc;\n"
       + "}\n")


def _fma_inputs(n=256, seed=2026):
    rng = np.random.default_rng(seed)
    m = n * len(_FMA_FORMS)
    a, b, d = (rng.uniform(-2, 2, m).astype(np.float32) for _ in range(3))
    # c close to -a*b, so that the rounding of the product shows in the sum
    c = (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-6, 1e-6, m))).astype(np.float32)
    x = np.stack([a, b, c, d], axis=1).reshape(-1)
    return np.zeros(m, np.float32), np.zeros(3 * n, np.float64), x, np.int32(n)


ACTIVEMASK = r'''
extern "C" __global__ void masks(unsigned* o) {
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    unsigned* out = o + 4 * 32 * w;
    out[lane] = __activemask();
    if (lane < 20) out[32 + lane] = __activemask();
    if (lane % 3 == 0) { if (lane > 8) out[64 + lane] = __activemask(); }
    for (int k = 0; k < lane % 4; ++k) out[96 + lane] = __activemask() | (unsigned)k;
}
'''

CURAND_XORWOW = r'''
#include <curand_kernel.h>
extern "C" __global__ void xorwow(unsigned* u, float* f, double* d, const unsigned long long* seeds,
                                  const unsigned long long* subseq, const unsigned long long* offset, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    curandState s;
    curand_init(seeds[i], subseq[i], offset[i], &s);
    for (int k = 0; k < 4; ++k) u[8 * i + k] = curand(&s);
    f[8 * i + 0] = curand_uniform(&s);
    f[8 * i + 1] = curand_normal(&s);
    f[8 * i + 2] = curand_normal(&s);
    float2 g = curand_normal2(&s);
    f[8 * i + 3] = g.x; f[8 * i + 4] = g.y;
    f[8 * i + 5] = curand_log_normal(&s, 0.5f, 2.0f);
    d[4 * i + 0] = curand_uniform_double(&s);
    d[4 * i + 1] = curand_normal_double(&s);
    skipahead(1000ull + i, &s);
    u[8 * i + 4] = curand(&s);
    skipahead_sequence(3ull + i, &s);
    u[8 * i + 5] = curand(&s);
    u[8 * i + 6] = curand(&s);
    u[8 * i + 7] = curand(&s);
    f[8 * i + 6] = curand_uniform(&s);
    d[4 * i + 2] = curand_normal_double(&s);
    d[4 * i + 3] = curand_uniform_double(&s);
    f[8 * i + 7] = curand_normal(&s);
}
'''

CURAND_PHILOX = r'''
#include <curand_kernel.h>
extern "C" __global__ void philox(unsigned* u, float* f, double* d, const unsigned long long* seeds,
                                  const unsigned long long* subseq, const unsigned long long* offset, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    curandStatePhilox4_32_10_t s;
    curand_init(seeds[i], subseq[i], offset[i], &s);
    for (int k = 0; k < 3; ++k) u[8 * i + k] = curand(&s);
    uint4 q = curand4(&s);
    u[8 * i + 3] = q.x; u[8 * i + 4] = q.w;
    float4 g = curand_uniform4(&s);
    f[8 * i + 0] = g.x; f[8 * i + 1] = g.w;
    float4 h = curand_normal4(&s);
    f[8 * i + 2] = h.y; f[8 * i + 3] = h.z;
    float2 p = curand_normal2(&s);
    f[8 * i + 4] = p.x;
    f[8 * i + 5] = curand_uniform(&s);
    f[8 * i + 6] = curand_normal(&s);
    d[4 * i + 0] = curand_uniform_double(&s);
    d[4 * i + 1] = curand_normal_double(&s);
    double2 dd = curand_normal2_double(&s);
    d[4 * i + 2] = dd.y;
    skipahead(12345ull + i, &s);
    u[8 * i + 5] = curand(&s);
    skipahead_sequence(7ull * i, &s);
    u[8 * i + 6] = curand(&s);
    u[8 * i + 7] = curand4(&s).y;
    f[8 * i + 7] = curand_log_normal(&s, 0.0f, 1.0f);
    d[4 * i + 3] = curand_uniform_double(&s);
}
'''


# The slots of d (4 per thread) that hold uniform values, which the CPU runtime gives bit for
# bit; the others hold normal ones (Box-Muller through CUDA's double log and sincospi, which
# the CPU runtime takes from the C library), equal within rounding. Every slot of u and f
# (the float distributions, normal ones included) is bit for bit.
CURAND_DOUBLE_UNIFORM_SLOTS = {"curand xorwow": (0, 3), "curand philox": (0, 3)}

# Many states' float normal distributions: Box-Muller through logf, sqrtf and __sincosf (the
# special-function unit's sin.approx and cos.approx), for both generators.
CURAND_NORMALS = r'''
#include <curand_kernel.h>
extern "C" __global__ void normals(float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* out = o + 16 * i;
    curandState x;
    curand_init(1000003ull * i + 17, i % 7, i % 5, &x);
    for (int k = 0; k < 5; ++k) out[k] = curand_normal(&x);
    float2 a = curand_normal2(&x);
    out[5] = a.x; out[6] = a.y;
    out[7] = curand_log_normal(&x, -1.0f, 0.5f);
    curandStatePhilox4_32_10_t p;
    curand_init(i, 3 * i, 2 * i, &p);
    float4 b = curand_normal4(&p), c = curand_normal4(&p);
    out[8] = b.x; out[9] = b.y; out[10] = b.z; out[11] = b.w; out[12] = c.x; out[13] = c.w;
    out[14] = curand_normal(&p);
    out[15] = curand_log_normal(&p, 2.0f, 0.25f);
}
'''
CURAND_NORMAL_STATES = 4096


def _curand_args(n=12):
    seeds = np.array([0, 1, 1234, 0xFFFFFFFF, 1 << 32, 0x123456789ABCDEF0, 42, 42, 42, 7, 7, 99], np.uint64)[:n]
    subseq = np.array([0, 0, 5, 1, 2, 1 << 20, 0, 1, 1 << 40, 3, 67, 0xFFFFFFFFFFFF], np.uint64)[:n]
    offset = np.array([0, 3, 0, 1000, 7, 0, 1 << 33, 5, 0, 123456789, 4, 1], np.uint64)[:n]
    return (np.zeros(8 * n, np.uint32), np.zeros(8 * n, np.float32), np.zeros(4 * n, np.float64),
            seeds, subseq, offset, np.int32(n))


GPU_MATH = r'''
extern "C" __global__ void gpu_math(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    o[9 * i + 0] = expf(v);
    o[9 * i + 1] = tanhf(v);
    o[9 * i + 2] = rsqrtf(v);
    o[9 * i + 3] = __expf(v);
    o[9 * i + 4] = 1.0f + expf(-v);
    o[9 * i + 5] = exp(v) - tanh(v);
    o[9 * i + 6] = rsqrt(fabsf(v)) + 1.0f;
    o[9 * i + 7] = expf(v * 0.5f) + expf(-v * 0.5f);
    o[9 * i + 8] = rnorm3df(v, 1.5f * v, -0.25f);
}
'''


# logf and log1pf (polynomials) and __sinf, __cosf, __sincosf (sin.approx and cos.approx, whose
# argument is reduced in turns: large ones are poor on a GPU, and kept so here).
GPU_LOG_SINE = r'''
extern "C" __global__ void log_sine(float* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s, c;
    o[8 * i + 0] = logf(v);
    o[8 * i + 1] = log1pf(v);
    o[8 * i + 2] = __sinf(v);
    o[8 * i + 3] = __cosf(v);
    __sincosf(v * 3.0f, &s, &c);
    o[8 * i + 4] = s;
    o[8 * i + 5] = c;
    o[8 * i + 6] = log(fabsf(v)) * -2.0f;
    o[8 * i + 7] = log1p(v * 0.5f) + 1.0f;
}
'''


def _log_sine_inputs(seed=2028):
    """Special values, the edges of the logarithms' branches (subnormals, -1, 1 +- ulp), angles
    at every scale from 2^-40 to 2^40 (quadrant edges and beyond 2^23 turns), both signs."""
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-39, -1e-39, 1.1754942e-38, 1.1754944e-38, np.inf, -np.inf,
                        np.nan, 1.0, -1.0, -0.99999994, -1.0000001, 0.99999994, 1.0000001, 2.0, 0.5, -0.5,
                        0.6666666, 0.6666667, 1.3333333, 1.3333334, 3.1415927, -3.1415927, 1.5707964, 6.2831855,
                        4.712389, 1e-30, 1e30, 3.4028235e38, -3.4028235e38, 2.0 ** 23, 2.0 ** 32], np.float32)
    angles = rng.choice([-1.0, 1.0], 3000) * 2.0 ** rng.uniform(-40, 40, 3000)
    near_one = rng.uniform(-1.5, 1.5, 1000)
    x = np.concatenate([special, angles, near_one]).astype(np.float32)
    return np.zeros(8 * len(x), np.float32), x, np.int32(len(x))


def _gpu_math_inputs(seed=2027):
    """Special values, the edges of expf's and tanhf's branches, subnormals, and random
    values at every scale from 2^-30 to 2^7, both signs. (The kernel's own arithmetic on the
    results never makes a subnormal: plain float arithmetic keeps them on the CPU runtime,
    where CuPy's -ftz=true flushes them: runtime/README.md, Limitations.)"""
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-39, -1e-39, 1.1754942e-38, 1.1754944e-38, np.inf, -np.inf,
                        np.nan, 0.6, 0.59999996, -0.6, 9.010913, 9.010914, -9.010914, 88.72283, 88.72284,
                        -87.33654, -87.33655, -103.0, -104.0, 126.5, -126.5, 1.0, -1.0, 0.5, 2.0, 4.0, 3.999999,
                        1e-30, 1e30, -1e30, 3.4028235e38], np.float32)
    scales = 2.0 ** rng.uniform(-30, 7, 4000)
    random = (rng.choice([-1.0, 1.0], 4000) * scales).astype(np.float32)
    x = np.concatenate([special, random]).astype(np.float32)
    return np.zeros(9 * len(x), np.float32), x, np.int32(len(x))


def cases():
    out = []
    for src_type in ("float", "double"):
        for dst, dtype in INT_TYPES.items():
            for implicit in (False, True):
                if src_type == "double" and implicit:
                    continue
                out.append(_conversion(src_type, dst, dtype, implicit))
    out.append(Case("shifts", SHIFTS, "shifts", 1, 32,
                    lambda: (np.zeros(4 * len(SHIFT_AMOUNTS), np.uint32), np.zeros(4 * len(SHIFT_AMOUNTS), np.int32),
                             np.zeros(3 * len(SHIFT_AMOUNTS), np.uint64), np.zeros(3 * len(SHIFT_AMOUNTS), np.int64),
                             SHIFT_AMOUNTS.copy(), np.int32(len(SHIFT_AMOUNTS)))))
    out.append(Case("fused multiply-add", FMA, "fma_forms", 2, 128, _fma_inputs))
    out.append(Case("fused multiply-add, -fmad=false", FMA, "fma_forms", 2, 128, _fma_inputs,
                    options=("--fmad=false",)))
    out.append(Case("gpu math functions", GPU_MATH, "gpu_math", 17, 256, _gpu_math_inputs))
    out.append(Case("gpu log and sine", GPU_LOG_SINE, "log_sine", 16, 256, _log_sine_inputs))
    out.append(Case("normal distributions (curand)", CURAND_NORMALS, "normals", CURAND_NORMAL_STATES // 256, 256,
                    lambda: (np.zeros(16 * CURAND_NORMAL_STATES, np.float32), np.int32(CURAND_NORMAL_STATES))))
    out.append(Case("activemask", ACTIVEMASK, "masks", 1, 64, lambda: (np.zeros(256, np.uint32),)))
    out.append(Case("curand xorwow", CURAND_XORWOW, "xorwow", 1, 32, _curand_args))
    out.append(Case("curand philox", CURAND_PHILOX, "philox", 1, 32, _curand_args))
    return out
