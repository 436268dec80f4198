// expf, tanhf, rsqrtf, rnorm3df and __expf as an NVIDIA GPU computes them, bit for bit.
//
// nvcc and NVRTC compile rsqrtf to PTX's rsqrt.approx, __expf to ex2.approx of x * log2(e),
// and expf and tanhf to a few correctly rounded float operations around ex2.approx and
// rcp.approx. Those three instructions run on the special-function unit, whose results are not
// documented to the bit: they are looked up in tables measured on an H100 (cpu/gpumath.py
// says how, and how one table serves every input). The operations around them are the ones
// the PTX of CUDA 13 shows (logs/2026-11-27-h100-gpu-math-tables.md). The front end
// (runtime/cudacheck/arith.py) rewrites device code's calls of these functions to call
// kc::gpu_expf and the rest.
//
// The tables reach the kernel's library through kc_gpu_math_tables, which
// cudacheck.cpu.gpumath.install() fills when the library is loaded; the symbol exists only
// in a library whose code uses one of these functions.
#pragma once

extern "C" {
// ex2 for x >= 0, ex2 for x < 0, rcp, rsqrt: 4-bit differences from the references below.
__attribute__((visibility("default"))) inline const unsigned char* kc_gpu_math_tables[4];
}

namespace kc {
namespace gpumath {
enum Table { EX2_POS, EX2_NEG, RCP, RSQRT };

inline float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
inline uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// Entry i of a table: its reference plus the stored difference, in units in the last place.
inline float entry(Table t, uint32_t i, float reference) {
    const unsigned char* p = kc_gpu_math_tables[t];
    if (!p) __builtin_trap();   // gpumath.install() was not run on this library: a bug of the runtime
    unsigned b = p[i >> 1];
    int delta = (int)((i & 1) ? b >> 4 : b & 15) - 8;
    return from_bits(bits(reference) + (uint32_t)delta);
}

// 2^f for f = +-i * 2^-23 (i < 2^23): a Taylor series in double, Horner's rule with separate
// multiplies and adds, as gpumath.reference() evaluates it.
inline float ex2_reference(double f) {
    static const double c[15] = {
        0x1.0000000000000p+0, 0x1.62e42fefa39efp-1, 0x1.ebfbdff82c58ep-3, 0x1.c6b08d704a0bfp-5,
        0x1.3b2ab6fba4e77p-7, 0x1.5d87fe78a6731p-10, 0x1.430912f86c787p-13, 0x1.ffcbfc588b0c6p-17,
        0x1.62c0223a5c823p-20, 0x1.b5253d395e7c3p-24, 0x1.e4cf5158b8ec8p-28, 0x1.e8cac7351bb23p-32,
        0x1.c3bd650fc2984p-36, 0x1.816193166d0f7p-40, 0x1.314964d5878a7p-44};
    double p = c[14];
    for (int k = 13; k >= 0; --k) p = kc::intr::opaque(kc::intr::opaque(p * f) + c[k]);
    return (float)p;
}

// PTX ex2.approx.ftz.f32: its argument's sign and |x| truncated to 23 fractional bits select
// 2^i * T+[f] or 2^-i * T-[f]; subnormal arguments and results are zero.
inline float ex2_ftz(float x) {
    x = kc::intr::ftz(x);
    if (x != x) return x;
    double a = fabs((double)x);
    if (a >= 256.0) return x > 0 ? __builtin_inff() : 0.0f;
    uint32_t fixed = (uint32_t)(a * 0x1p23);   // exact product, truncated
    uint32_t i = fixed >> 23, f = fixed & 0x7fffff;
    bool neg = x < 0;
    float v = entry(neg ? EX2_NEG : EX2_POS, f, ex2_reference(neg ? -(double)f * 0x1p-23 : (double)f * 0x1p-23));
    return kc::intr::ftz((float)ldexp((double)v, neg ? -(int)i : (int)i));
}

// PTX rcp.approx.ftz.f32: rcp(m * 2^e) = rcp(m) * 2^-e for m in [1, 2).
inline float rcp_ftz(float x) {
    x = kc::intr::ftz(x);
    if (x != x) return x;
    if (x == 0.0f) return copysignf(__builtin_inff(), x);
    if (__builtin_isinf(x)) return copysignf(0.0f, x);
    uint32_t u = bits(x), m = u & 0x7fffff;
    int e = (int)((u >> 23) & 0xff) - 127;
    float v = entry(RCP, m, (float)(1.0 / (1.0 + m * 0x1p-23)));
    return copysignf(kc::intr::ftz((float)ldexp((double)v, -e)), x);
}

// PTX rsqrt.approx.f32: rsqrt(m * 4^e) = rsqrt(m) * 2^-e for m in [1, 4). A subnormal
// argument is flushed under KC_FTZ (rsqrt.approx.ftz); otherwise it is not in the table,
// and 1/sqrt(x) rounded is used.
inline float rsqrt(float x) {
    x = kc::intr::fz(x);
    if (x != x || x < 0.0f) return __builtin_nanf("");
    if (x == 0.0f) return copysignf(__builtin_inff(), x);
    if (__builtin_isinf(x)) return 0.0f;
    if (x < FLT_MIN) return (float)(1.0 / sqrt((double)x));
    uint32_t u = bits(x);
    int e = (int)(u >> 23) - 127;
    int half = e >= 0 ? e / 2 : -((1 - e) / 2);   // floor(e / 2)
    uint32_t i = (u & 0x7fffff) | (uint32_t)(e - 2 * half) << 23;   // index into [1, 4)
    double m = (e - 2 * half) ? 2.0 + (u & 0x7fffff) * 0x1p-22 : 1.0 + (u & 0x7fffff) * 0x1p-23;
    float v = entry(RSQRT, i, (float)(1.0 / sqrt(m)));
    return (float)ldexp((double)v, -half);
}

// fused multiply-add rounded once, then flushed like an .ftz instruction under KC_FTZ
inline float fma_(float a, float b, float c) { return kc::intr::fz(fmaf(a, b, c)); }
inline float mul_(float a, float b) { return kc::intr::fz(kc::intr::opaque(a * b)); }
inline float add_(float a, float b) { return kc::intr::fz(kc::intr::opaque(a + b)); }
}  // namespace gpumath

// expf: j = round(x log2 e) clamped to [-126, 126], r = x log2 e - j with log2 e in two
// parts, and 2^j ex2(r), with 2^j made from j's bits.
inline float gpu_expf(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float s = fma_(x, from_bits(0x3BBB989D), 0.5f);      // x log2(e) / 252 + 1/2
    s = s > 0.0f ? (s < 1.0f ? s : 1.0f) : 0.0f;        // saturated (NaN gives 0)
    float t = (float)floor((double)s * 252.0 + 12582913.0);   // rounded down: j + 127 in t's low bits
    float j = add_(t, from_bits(0xCB40007F));
    float r = fma_(x, from_bits(0x3FB8AA3B), -j);
    r = fma_(x, from_bits(0x32A57060), r);
    return mul_(ex2_ftz(r), from_bits(bits(t) << 23));
}

// tanhf: 1 - 2 / (2^(2|x| log2 e) + 1) with the sign of x for |x| >= 0.6 (1 from 9.01 on), an
// odd polynomial below.
inline float gpu_tanhf(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float a = fabsf(x);
    float big = fma_(rcp_ftz(add_(ex2_ftz(mul_(a, from_bits(0x4038AA3B))), 1.0f)), -2.0f, 1.0f);
    big = copysignf(a >= from_bits(0x41102CB4) ? 1.0f : big, x);
    float x2 = mul_(x, x);
    float p = fma_(from_bits(0x3C80F082), x2, from_bits(0xBD563CAE));
    p = fma_(p, x2, from_bits(0x3E085941));
    p = fma_(p, x2, from_bits(0xBEAAA9ED));
    p = fma_(p, x2, 0.0f);
    float small = fma_(p, x, x);
    return a >= from_bits(0x3F19999A) ? big : small;
}

inline float gpu_rsqrtf(float x) { return gpumath::rsqrt(x); }

// rnorm3df: the three magnitudes scaled by a power of two near 1/max, the sum of squares
// (smallest two multiplied, then two fused multiply-adds), rsqrt.approx, scaled back; NaN if
// any is NaN, 0 if any is infinite.
inline float gpu_rnorm3df(float x, float y, float z) {
    using namespace gpumath;
    float a = fabsf(kc::intr::fz(x)), b = fabsf(kc::intr::fz(y)), c = fabsf(kc::intr::fz(z));
    float any = add_(add_(a, b), c);
    float lo = fminf(a, b), hi = fmaxf(a, b), mid = fminf(hi, c), top = fmaxf(hi, c);
    float scale = from_bits(0x7E800000u - (bits(top) & 0xFE000000u));
    float m = mul_(mid, scale), l = mul_(lo, scale), t = mul_(top, scale);
    float r = mul_(rsqrt(fma_(t, t, fma_(l, l, mul_(m, m)))), scale);
    if (any != any) r = any;
    return top == __builtin_inff() ? 0.0f : r;
}

// __expf: ex2.approx of x * log2(e). Under KC_FTZ (CuPy's -ftz=true) the table's
// ex2.approx.ftz; without it a GPU keeps subnormal results, which the table does not hold:
// the C library's expf then.
inline float gpu_fast_expf(float x) {
    if (!KC_FTZ) return __expf(x);
    return gpumath::ex2_ftz(gpumath::mul_(x, gpumath::from_bits(0x3FB8AA3B)));
}
}  // namespace kc
