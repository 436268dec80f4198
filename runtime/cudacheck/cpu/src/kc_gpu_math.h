// expf, exp2f, exp10f, expm1f, tanhf, logf, log1pf, sinf, cosf, sincosf, tanf, sinpif, cospif,
// sincospif, erff, erfcf, normcdff, atanf, atan2f, asinf, acosf, sinhf, coshf, hypotf, rsqrtf,
// rnorm3df, __expf, __exp10f, __logf, __log2f, __log10f, __sinf, __cosf and __sincosf as an NVIDIA
// GPU computes them, bit for bit; and log2f, log10f, cbrtf, powf, __powf and __tanf.
//
// nvcc and NVRTC compile rsqrtf to PTX's rsqrt.approx, exp2f and __expf to ex2.approx (of x and of
// x * log2(e)), __sinf and __cosf to sin.approx and cos.approx, and expf, exp10f, expm1f, tanhf,
// erff, erfcf, normcdff, atanf, asinf, acosf, sinhf and coshf to a few correctly rounded float
// operations around ex2.approx, rcp.approx, rsqrt.approx and div.approx. Those instructions run on
// the special-function unit, whose results are not documented to the bit: they are looked up in
// tables measured on an H100 (cpu/gpumath.py says how, and how one table serves every input). logf,
// log1pf, sinf, cosf, sincosf, sinpif, cospif and sincospif are float operations alone (a reduction
// and a polynomial; sinf's reduction of large arguments is integer arithmetic and one double
// product), tanf is those and rcp.approx, hypotf a scaling and sqrt.rn, and atan2f div.rn and a
// polynomial. log2f and log10f are float operations alone, powf float operations around
// rcp.approx, cbrtf lg2.approx, ex2.approx and a Newton step, __powf lg2.approx and ex2.approx,
// __tanf sin.approx, cos.approx and div.approx. The operations are the ones the PTX of CUDA 13
// shows (logs/2026-11-27-h100-gpu-math-tables.md, logs/2026-12-07-gpu-sinf.md,
// logs/2026-12-07-gpu-math-functions.md, logs/2026-12-07-math-fns-2.md). The front end (runtime/cudacheck/frontend/arith.py)
// rewrites device code's calls of these and of their float overloads to call kc::gpu_expf and the
// rest; __sinf, __cosf and __sincosf, CUDA's own names, are defined here.
//
// The tables reach the kernel's library through kc_gpu_math_tables and kc_gpu_sine, which
// cudacheck.cpu.gpumath.install() fills when the library is loaded; each symbol exists only
// in a library whose code uses it.
#pragma once

extern "C" {
// ex2 for x >= 0, ex2 for x < 0, rcp, rsqrt, sqrt: 4-bit differences from the references below.
__attribute__((visibility("default"))) inline const unsigned char* kc_gpu_math_tables[5];
// sin.approx's quarter wave Q[r], r < 2^23
__attribute__((visibility("default"))) inline const float* kc_gpu_sine;
// lg2.approx: T0[m] and T1[m] (bit patterns, m < 2^23), then a bitmap over m per result binade
// (cpu/gpumath.py: LG2_CLASSES, decode_lg2)
__attribute__((visibility("default"))) inline const uint32_t* kc_gpu_lg2;
}

namespace kc {
namespace gpumath {
enum Table { EX2_POS, EX2_NEG, RCP, RSQRT, SQRT };

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

// x = m * 4^half, m in [1, 4): the entry for m of the table of rsqrt.approx or sqrt.approx
// (t), whose reference is 1/sqrt(m) or sqrt(m) rounded. x is a positive normal float.
inline float root_entry(Table t, float x, int& half) {
    uint32_t u = bits(x);
    int e = (int)(u >> 23) - 127;
    half = e >= 0 ? e / 2 : -((1 - e) / 2);   // floor(e / 2)
    uint32_t i = (u & 0x7fffff) | (uint32_t)(e - 2 * half) << 23;   // index into [1, 4)
    double m = (e - 2 * half) ? 2.0 + (u & 0x7fffff) * 0x1p-22 : 1.0 + (u & 0x7fffff) * 0x1p-23;
    return entry(t, i, (float)(t == RSQRT ? 1.0 / sqrt(m) : sqrt(m)));
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
    int half;
    float v = root_entry(RSQRT, x, half);
    return (float)ldexp((double)v, -half);
}

// PTX sqrt.approx.f32 (.ftz: ftz), what --use_fast_math makes of sqrtf: sqrt(m * 4^e) =
// sqrt(m) * 2^e for m in [1, 4); without .ftz a subnormal x gives the rule's result for
// x * 2^24, times 2^-12 (scripts/record_gpu_math_tables.py checks both on every float).
inline float sqrt_approx(float x, bool ftz) {
    if (ftz) x = kc::intr::ftz(x);
    if (x != x || x < 0.0f) return __builtin_nanf("");
    if (x == 0.0f || __builtin_isinf(x)) return x;
    if (x < FLT_MIN) return sqrt_approx(x * 0x1p24f, false) * 0x1p-12f;   // both exact
    int half;
    float v = root_entry(SQRT, x, half);
    return (float)ldexp((double)v, half);
}

// PTX sin.approx.f32 (cos: turn = true), .ftz or not alike: t = x * 1/(2 pi) rounded toward
// zero, in turns; T = the fraction of |t| in 25 fixed-point bits, truncated (a quarter turn
// later for the cosine); the quarter wave at T's offset in its quadrant, mirrored in odd
// quadrants, negative in the lower half-turn and (the sine) for x of negative sign.
inline float sincos_approx(float x, bool cosine) {
    if (!__builtin_isfinite(x)) return __builtin_nanf("");
    double t = fabs((double)x) * (double)from_bits(0x3E22F983);   // exact: 24 x 24 bits
    float tf = (float)t;
    if ((double)tf > t) tf = nextafterf(tf, 0.0f);                 // toward zero
    double turns = (double)tf;
    uint32_t T = (uint32_t)((turns - floor(turns)) * 0x1p25);
    if (cosine) T = (T + (1u << 23)) & ((1u << 25) - 1);
    uint32_t quadrant = T >> 23, r = T & ((1u << 23) - 1);
    if (quadrant & 1) r = (1u << 23) - 1 - r;
    if (!kc_gpu_sine) __builtin_trap();   // gpumath.install() was not run on this library: a bug of the runtime
    float v = kc_gpu_sine[r];
    bool negative = (quadrant >= 2) != (!cosine && __builtin_signbit(x));
    return negative ? -v : v;
}

// PTX lg2.approx.f32 (.ftz under KC_FTZ), by the rule cpu/gpumath.py states: x = 2^e (1 + m 2^-23)
// gives T0[m] (e = 0), T1[m] (e = -1), or else e + L[m] rounded toward zero, one unit lower where
// the bitmap of the result's binade has m; a subnormal x, lg2_approx(x 2^24) - 24. Zero gives
// -inf, a negative x or NaN a NaN, +inf +inf.
inline float lg2_approx(float x) {
    constexpr uint32_t N = 1u << 23;
    uint32_t u = bits(x);
    if (KC_FTZ && !(u & 0x7F800000u)) u &= 0x80000000u;
    if (!(u & 0x7FFFFFFFu)) return -__builtin_inff();
    if (u > 0x7F800000u) return from_bits(0x7FFFFFFFu);
    if (u == 0x7F800000u) return __builtin_inff();
    const uint32_t* t = kc_gpu_lg2;
    if (!t) __builtin_trap();   // gpumath.install() was not run on this library: a bug of the runtime
    int e = int(u >> 23) - 127;
    uint32_t m = u & (N - 1);
    if (e == -127) {   // subnormal (not flushed): as the GPU's code does, scaled into the normal range
        return lg2_approx(from_bits(u) * 16777216.0f) - 24.0f;
    } else if (e == 0) {
        return from_bits(t[m]);
    } else if (e == -1) {
        return from_bits(t[N + m]);
    }
    float t0 = from_bits(t[m]);
    double v = e + (t0 < 0.5f ? (double)t0 : 1.0 + (double)from_bits(t[N + m]));
    float r = (float)v;
    if (fabs((double)r) > fabs(v)) r = nextafterf(r, 0.0f);
    uint32_t size = uint32_t(e > 0 ? e : -e - 1);
    uint32_t k = uint32_t(31 - __builtin_clz(size)) + (e > 0 ? 0 : 7);   // LG2_CLASSES' index
    const uint32_t* fix = t + 2 * N + k * (N / 32);
    return (fix[m >> 5] >> (m & 31)) & 1 ? from_bits(bits(r) - 1) : r;
}

// PTX ex2.approx.f32 (.ftz under KC_FTZ): ex2.approx.ftz's table for every normal result.
// Without KC_FTZ, where x is below -126 (a subnormal result), ptxas halves x, takes the
// special-function unit's 2^(x/2), a normal number, and squares it, rounding once (its SASS for
// sm_90: FSETP.GEU x, -126; FMUL x, 0.5; MUFU.EX2; FMUL r, r; logs/2026-12-07-cse-contraction.md).
inline float ex2(float x) {
    if (KC_FTZ || !(x < -126.0f)) return ex2_ftz(x);
    float half = ex2_ftz(x * 0.5f);   // x * 0.5 exact
    return kc::intr::opaque(half * half);
}

// PTX div.approx.ftz.f32, which an H100 computes as x times rcp.approx.ftz(y), one rounding
// (every pair of 5 x 2^26 measured, scripts/probe_lg2_div.py), flushed.
inline float div_approx_ftz(float x, float y) { return kc::intr::ftz(kc::intr::ftz(x) * rcp_ftz(y)); }

// fused multiply-add rounded once, then flushed like an .ftz instruction under KC_FTZ
inline float fma_(float a, float b, float c) { return kc::intr::fz(fmaf(a, b, c)); }
inline float mul_(float a, float b) { return kc::intr::fz(kc::intr::opaque(a * b)); }
inline float add_(float a, float b) { return kc::intr::fz(kc::intr::opaque(a + b)); }
inline float sub_(float a, float b) { return kc::intr::fz(kc::intr::opaque(a - b)); }
// PTX cvt.rzi.s32.f32: truncated, saturated at the ends of int's range, NaN to 0
inline int32_t f2i(float x) {
    if (x != x) return 0;
    if (x >= 0x1p31f) return INT32_MAX;
    return x <= -0x1p31f ? INT32_MIN : (int32_t)x;
}
inline float i2f(int32_t i) { return (float)i; }   // exact here: multiples of 2^23 below 2^31

// log(2^e m) = e ln 2 + log1p(f), f = m - 1 with m in [split, 2 split), by a polynomial in f
// whose last steps are f + f^2 (f p(f)) and the fused e ln 2 +. The split, the coefficients and
// the order of operations are those of CUDA's logf and log1pf.
inline float log_poly(float f, const uint32_t (&c)[8], float e) {
    float p = fma_(from_bits(c[0]), f, from_bits(c[1]));
    for (int k = 2; k < 8; ++k) p = fma_(p, f, from_bits(c[k]));
    p = fma_(p, f, -0.5f);
    return fma_(e, from_bits(0x3F317218), fma_(mul_(f, p), f, f));
}

// x = q pi/2 + r, |r| <= pi/4 or nearly, as CUDA's sinf, cosf and tanf reduce x. Below
// 105615 (0x47CE4780) and for NaN, q is x 2/pi rounded to the nearest integer and r = x - q pi/2
// by three fused steps with pi/2 in three floats. An infinity gives r = NaN (x * 0). Larger
// x are reduced exactly (Payne and Hanek): the 24-bit significand times 2/pi's bits that
// matter at its exponent gives the two quadrant bits and 62 fraction bits, rounded to the
// nearer multiple of pi/2; r is that 62-bit remainder converted to double, times pi/2 * 2^-64,
// rounded to float.
struct Reduced {
    float r;
    int q;
};
inline Reduced reduce_half_pi(float x) {
    float a = fabsf(x);
    if (!(a >= from_bits(0x47CE4780))) {
        int q = x != x ? 0 : (int)rintf(mul_(x, from_bits(0x3F22F983)));   // cvt.rni: NaN gives 0
        float qf = (float)q;
        float r = fma_(qf, from_bits(0xBFC90FDA), x);
        r = fma_(qf, from_bits(0xB3A22168), r);
        return {fma_(qf, from_bits(0xA7C234C5), r), q};
    }
    if (a == __builtin_inff()) return {mul_(x, 0.0f), 0};
    // 2/pi in binary, 192 bits, least significant word first
    static const uint32_t two_over_pi[6] = {0x3C439041, 0xDB629599, 0xF534DDC0,
                                            0xFC2757D1, 0x4E441529, 0xA2F9836E};
    uint32_t u = bits(x), m = (u << 8) | 0x80000000u;   // the significand, top bit at 31
    uint32_t w[7];
    uint64_t carry = 0;
    for (int i = 0; i < 6; ++i) {
        uint64_t p = (uint64_t)two_over_pi[i] * m + carry;
        w[i] = (uint32_t)p;
        carry = p >> 32;
    }
    w[6] = (uint32_t)carry;
    // The exponent (>= 15 here) picks the 64 bits of the product that begin with the quadrant.
    uint32_t e = ((u >> 23) & 255) - 128, k = e >> 5, shift = e & 31;
    uint32_t hi = w[6 - k], lo = w[5 - k];
    if (shift) {
        hi = (hi << shift) | (lo >> (32 - shift));
        lo = (lo << shift) | (w[4 - k] >> (32 - shift));
    }
    uint32_t frac = (hi << 2) | (lo >> 30), up = frac >> 31;   // up: past half a quadrant
    int q = (int)((hi >> 30) + up);
    uint32_t flip = up ? ~0u : 0u;   // then the remainder is the next multiple's, negative
    bool negative = (u >> 31) != up;
    int64_t fixed = (int64_t)(((uint64_t)(frac ^ flip) << 32) | ((lo << 2) ^ flip));
    float r = kc::intr::fz((float)((double)fixed * 0x1.921FB54442D19p-64));
    return {negative ? -r : r, (u >> 31) ? -q : q};
}

// sin(r + q pi/2) from the reduction: sin's odd polynomial in r for even q, cos's even one
// for odd q, negated (as -1 * v + 0, which makes a zero +0) where q & 2. r2 = r * r.
inline float quadrant_sine(float r, float r2, int q) {
    float v;
    if (q & 1) {
        float p = fma_(from_bits(0x37CBAC00), r2, from_bits(0xBAB607ED));
        p = fma_(p, r2, from_bits(0x3D2AAABB));
        p = fma_(p, r2, from_bits(0xBEFFFFFF));
        v = fma_(p, r2, 1.0f);
    } else {
        float p = fma_(from_bits(0xB94D4153), r2, from_bits(0x3C0885E4));
        p = fma_(p, r2, from_bits(0xBE2AAAA8));
        v = fma_(p, fma_(r2, r, 0.0f), r);
    }
    return q & 2 ? fma_(v, -1.0f, 0.0f) : v;
}
}  // namespace gpumath

// b^x for expf (b = e) and exp10f (b = 10): j = round(x log2 b) clamped to [-126, 126],
// r = x log2 b - j with log2 b in two parts (hi + lo), and 2^j ex2(r), with 2^j made from
// j's bits. per_252 is log2(b) / 252 rounded.
namespace gpumath {
inline float exp_by_ex2(float x, uint32_t per_252, uint32_t hi, uint32_t lo) {
    x = kc::intr::fz(x);
    float s = fma_(x, from_bits(per_252), 0.5f);        // x log2(b) / 252 + 1/2
    s = s > 0.0f ? (s < 1.0f ? s : 1.0f) : 0.0f;        // saturated (NaN gives 0)
    float t = (float)floor((double)s * 252.0 + 12582913.0);   // rounded down: j + 127 in t's low bits
    float j = add_(t, from_bits(0xCB40007F));
    float r = fma_(x, from_bits(hi), -j);
    r = fma_(x, from_bits(lo), r);
    return mul_(ex2_ftz(r), from_bits(bits(t) << 23));
}
}  // namespace gpumath
inline float gpu_expf(float x) { return gpumath::exp_by_ex2(x, 0x3BBB989D, 0x3FB8AA3B, 0x32A57060); }
inline float gpu_exp10f(float x) { return gpumath::exp_by_ex2(x, 0x3C57FA62, 0x40549A78, 0x33979A37); }
// exp2f: ex2.approx itself (.ftz under KC_FTZ).
inline float gpu_exp2f(float x) { return gpumath::ex2(kc::intr::fz(x)); }

// expm1f: j = round(x log2 e), 0 for |x| < 0.41; r = x - j ln 2 with ln 2 in two parts;
// expm1(r) = r + r^2 p(r); 2^j expm1(r) + (2^j - 1) by one fused step, 2^j from ex2.approx
// (exact at integers); j = 128 as twice the result for 127, so that 2^j stays finite. +inf past
// j = 128, -1 below j = -25, x itself (as x + x) for +-0.
inline float gpu_expm1f(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float j = rintf(mul_(x, from_bits(0x3FB8AA3B)));
    if (fabsf(x) < from_bits(0x3ED1EB85)) j = 0.0f;
    float r = fma_(-j, from_bits(0x3F317200), x);
    r = fma_(-j, from_bits(0x35BFBE8E), r);
    bool top = j == 128.0f;
    if (top) j = add_(j, -1.0f);
    float p = fma_(from_bits(0x3AB5EBE6), r, from_bits(0x3C095663));
    p = fma_(p, r, from_bits(0x3D2AABE3));
    p = fma_(p, r, from_bits(0x3E2AA9F6));
    p = fma_(p, r, from_bits(0x3EFFFFFE));
    float m = fma_(mul_(r, p), r, r);
    float e = ex2(j);
    float v = fma_(m, e, add_(e, -1.0f));
    if (top) v = add_(v, v);
    if (j > 128.0f) v = __builtin_inff();
    if (j < -25.0f) v = -1.0f;
    return x == 0.0f ? add_(x, x) : v;
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

// logf: subnormal x scaled by 2^23 first; m = x / 2^e in [2/3, 4/3) by integer arithmetic on
// the bits; +inf and NaN through x * inf + inf, which makes negative x NaN; 0 gives -inf.
inline float gpu_logf(float x) {
    using namespace gpumath;
    static const uint32_t c[8] = {0xBE055027, 0x3E1039F6, 0xBDF8CDCC, 0x3E0F2955,
                                  0xBE2AD8B9, 0x3E4CED0B, 0xBE7FFF22, 0x3EAAAA78};
    x = kc::intr::fz(x);
    bool tiny = x < from_bits(0x00800000);
    float y = tiny ? mul_(x, from_bits(0x4B000000)) : x;
    uint32_t u = bits(y), k = (u - 0x3F2AAAABu) & 0xFF800000u;
    float e = fma_(i2f((int32_t)k), from_bits(0x34000000), tiny ? -23.0f : 0.0f);
    float r = log_poly(add_(from_bits(u - k), -1.0f), c, e);
    if (u >= 0x7F800000u) r = fma_(y, __builtin_inff(), __builtin_inff());
    return y == 0.0f ? -__builtin_inff() : r;
}

// log1pf: 1 + x rounded toward zero gives the exponent e; f = x / 2^e + (2^-e / 4 ... - 1)
// exactly as the PTX forms it; NaN for x < -1 and NaN x, +inf for +inf, -0 for -0.
inline float gpu_log1pf(float x) {
    using namespace gpumath;
    static const uint32_t c[8] = {0xBD39BF78, 0x3DD80012, 0xBE0778E0, 0x3E146475,
                                  0xBE2A68DD, 0x3E4CAF9E, 0xBE800042, 0x3EAAAAE6};
    x = kc::intr::fz(x);
    uint32_t u = bits(x), k = (bits(__fadd_rz(x, 1.0f)) - 0x3F400000u) & 0xFF800000u;
    float f = add_(fma_(0.25f, from_bits(0x40800000u - k), -1.0f), from_bits(u - k));
    float r = log_poly(f, c, mul_(i2f((int32_t)k), from_bits(0x34000000)));
    if (u >= 0x7F800000u) {
        if ((int32_t)u >= -1082130431) r = fma_(x, __builtin_inff(), __builtin_inff());
        if (x == 0.0f) r = -0.0f;
    }
    return r;
}

// sinf and cosf: the reduction above, then sin(r + q pi/2) and sin(r + (q + 1) pi/2).
namespace gpumath {
inline float sine_after(float x, int quarter_turns) {
    Reduced d = reduce_half_pi(kc::intr::fz(x));
    return quadrant_sine(d.r, mul_(d.r, d.r), d.q + quarter_turns);
}
}  // namespace gpumath
inline float gpu_sinf(float x) { return gpumath::sine_after(x, 0); }
inline float gpu_cosf(float x) { return gpumath::sine_after(x, 1); }
// sincosf: one reduction and both polynomials, each result negated by neg.f32 where CUDA's
// sinf and cosf compute -1 * v + 0: these differ only for v = 0, which the reduction never
// gives with q & 2 set (NaN and infinities have q = 0), so the two are sinf's and cosf's bits.
inline void gpu_sincosf(float x, float* s, float* c) {
    gpumath::Reduced d = gpumath::reduce_half_pi(kc::intr::fz(x));
    float r2 = gpumath::mul_(d.r, d.r);
    *s = gpumath::quadrant_sine(d.r, r2, d.q);
    *c = gpumath::quadrant_sine(d.r, r2, d.q + 1);
}

// tanf: the same reduction; an odd polynomial in r (r itself at |r| = 0x3A00B43C), and for odd
// q, -1 over it by rcp.approx.ftz.
inline float gpu_tanf(float x) {
    using namespace gpumath;
    Reduced d = reduce_half_pi(kc::intr::fz(x));
    float r2 = mul_(d.r, d.r);
    static const uint32_t c[6] = {0x3C190000, 0x3B560000, 0x3CC70000, 0x3D5B0000, 0x3E089438, 0x3EAAAA88};
    float p = fma_(from_bits(c[0]), r2, from_bits(c[1]));
    for (int k = 2; k < 6; ++k) p = fma_(p, r2, from_bits(c[k]));
    float t = fabsf(d.r) == from_bits(0x3A00B43C) ? d.r : fma_(p, mul_(r2, d.r), d.r);
    return d.q & 1 ? rcp_ftz(-t) : t;
}

// sin(pi x) and cos(pi x) as CUDA's sinpif, cospif and sincospif compute them: n = 2x rounded to
// the nearest integer, r = x - n/2 (exact, |r| <= 1/4), both polynomials (pi r + r^3 a(r^2) and
// 1 + r^2 b(r^2)), and the quadrant i = n taken from n's value as cvt.rzi.s32 gives it.
namespace gpumath {
struct PiReduced {
    float sine, cosine;
    uint32_t i;   // wraps as add.s32 does
};
inline PiReduced reduce_pi(float x) {
    float n = rintf(add_(x, x));
    float r = fma_(-n, 0.5f, x);
    float r2 = mul_(r, r);
    float a = fma_(from_bits(0xBF17ACC9), r2, from_bits(0x40233590));
    a = fma_(a, r2, from_bits(0xC0A55DF6));
    float sine = fma_(from_bits(0x40490FDB), r, fma_(a, fma_(r2, r, 0.0f), 0.0f));
    float b = fma_(from_bits(0x3E684E12), r2, from_bits(0xBFAAD2E0));
    b = fma_(b, r2, from_bits(0x4081E0CF));
    b = fma_(b, r2, from_bits(0xC09DE9E6));
    return {sine, fma_(b, r2, 1.0f), (uint32_t)f2i(n)};
}
// sin(pi x + i pi/2) for quadrant i: negated as 0 - v in the lower half turn.
inline float pi_quadrant(float x, uint32_t quarter_turns) {
    PiReduced d = reduce_pi(x);
    uint32_t i = d.i + quarter_turns;
    float v = i & 1 ? d.cosine : d.sine;
    return i & 2 ? sub_(0.0f, v) : v;
}
}  // namespace gpumath
// sinpif: x * 0 (zero of x's sign, NaN for infinities) for integers x, every float from 2^23 on.
inline float gpu_sinpif(float x) {
    x = kc::intr::fz(x);
    return truncf(x) != x ? gpumath::pi_quadrant(x, 0) : gpumath::mul_(x, 0.0f);
}
// cospif: x past 2^24 (an even integer) becomes x * 0 first: cos(0) = 1, NaN for infinities.
inline float gpu_cospif(float x) {
    x = kc::intr::fz(x);
    return gpumath::pi_quadrant(fabsf(x) > 0x1p24f ? gpumath::mul_(x, 0.0f) : x, 1);
}
// sincospif: one reduction; the sine negated by neg.f32 and the cosine by -1 * v + 0 (the same bits
// as sinpif's and cospif's 0 - v: v is never zero there), the sine x * 0 for integers and the
// cosine that plus 1 past 2^24.
inline void gpu_sincospif(float x, float* s, float* c) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    PiReduced d = reduce_pi(x);
    float sine = d.i & 1 ? d.cosine : d.sine, cosine = d.i & 1 ? d.sine : d.cosine;
    if (d.i & 2) sine = -sine;
    if ((d.i + 1) & 2) cosine = fma_(cosine, -1.0f, 0.0f);
    if (truncf(x) == x) sine = mul_(x, 0.0f);
    if (fabsf(x) > 0x1p24f) cosine = add_(sine, 1.0f);
    *s = sine;
    *c = cosine;
}

// erff: an odd polynomial, x + x p(x^2), below |x| = 1.00295 (0x3F8060FE) and for NaN; above,
// 1 - 2^(-|x| - |x| q(|x|)) by ex2.approx.ftz, with the sign of x.
inline float gpu_erff(float x) {
    using namespace gpumath;
    static const uint32_t c[2][7] = {
        {0x38B1E96A, 0xBA574D20, 0x3BAAD5EA, 0xBCDC1BE7, 0x3DE718AF, 0xBEC093AC, 0x3E0375D3},
        {0x38EB4C3A, 0xBAAE005B, 0x3C09919F, 0xBD24D99A, 0x3E235519, 0x3F69B4F9, 0x3F210A14}};
    x = kc::intr::fz(x);
    float a = fabsf(x);
    bool big = a >= from_bits(0x3F8060FE);
    const uint32_t* k = c[big];
    float t = big ? a : mul_(x, x);
    float p = fma_(from_bits(k[0]), t, from_bits(k[1]));
    for (int i = 2; i < 7; ++i) p = fma_(p, t, from_bits(k[i]));
    float u = big ? -a : x;
    float r = fma_(p, u, u);
    return big ? copysignf(sub_(1.0f, ex2_ftz(r)), x) : r;
}

// atanf: y = |x|, or rcp.approx.ftz(|x|) above 1; y + y^3 p(y^2); above 1, pi/2 minus that, pi/2
// as the fused product 0x3F6EE581 * 0x3FD774EB; the sign of x (NaN passes through unsigned).
inline float gpu_atanf(float x) {
    using namespace gpumath;
    static const uint32_t c[8] = {0x3B2090AA, 0xBC6BE14F, 0x3D23397E, 0xBD948A7A,
                                  0x3DD76B21, 0xBE111E88, 0x3E4CAF60, 0xBEAAAA27};
    x = kc::intr::fz(x);
    float a = fabsf(x);
    bool above = a > 1.0f;
    float y = above ? rcp_ftz(a) : a;
    float y2 = mul_(y, y);
    float p = fma_(from_bits(c[0]), y2, from_bits(c[1]));
    for (int i = 2; i < 8; ++i) p = fma_(p, y2, from_bits(c[i]));
    float r = fma_(mul_(y2, p), y, y);
    if (above) r = fma_(from_bits(0x3F6EE581), from_bits(0x3FD774EB), -r);
    return a <= __builtin_inff() ? copysignf(r, x) : r;
}

// hypotf: both magnitudes scaled by a power of two near 1/max (from the larger's bits, compared as
// integers), sqrt.rn of the scaled sum of squares, scaled back; the larger where the smaller is 0,
// +inf where it is infinite (so hypot(inf, NaN) = inf).
inline float gpu_hypotf(float x, float y) {
    using namespace gpumath;
    uint32_t ua = bits(fabsf(kc::intr::fz(x))), ub = bits(fabsf(kc::intr::fz(y)));
    float lo = from_bits(ua < ub ? ua : ub), hi = from_bits(ua < ub ? ub : ua);
    uint32_t e = bits(hi) & 0xFE000000u;
    float scale = from_bits(0x7E800000u - e);
    float m = mul_(lo, scale), big = mul_(hi, scale);
    float r = mul_(kc::intr::fz(sqrtf(fma_(big, big, mul_(m, m)))), from_bits(e | 0x00800000u));
    if (lo == 0.0f) r = hi;
    return lo == __builtin_inff() ? lo : r;
}

// log2f's and powf's (of |x|) first step, as logf's is inline above: x = 2^e m with m in
// [split, 2 split), found by integer arithmetic on the bits of x, or of x 2^scale where x is below
// the normal range (zero and negative x too; their results are decided later).
namespace gpumath {
struct LogSplit {
    float y;    // x, or x 2^scale
    uint32_t u; // y's bits
    float m, e; // y = 2^e m
};
inline LogSplit log_split(float x, uint32_t split, int scale) {
    bool tiny = x < from_bits(0x00800000);
    float y = tiny ? mul_(x, from_bits((uint32_t)(127 + scale) << 23)) : x;
    uint32_t u = bits(y), k = (u - split) & 0xFF800000u;
    return {y, u, from_bits(u - k), fma_(i2f((int32_t)k), from_bits(0x34000000), tiny ? (float)-scale : 0.0f)};
}
}  // namespace gpumath

// log2f: m in [sqrt(1/2), sqrt 2), f = m - 1, e + (f log2 e + f (f p(f))); +inf and NaN (and
// negative x) through y * inf + inf; 0 gives -inf.
inline float gpu_log2f(float x) {
    using namespace gpumath;
    static const uint32_t c[10] = {0x3DC6B27F, 0xBE2C7F30, 0x3E2FCF2A, 0xBE374E43, 0x3E520BF4,
                                   0xBE763C8B, 0x3E93BF99, 0xBEB8AA49, 0x3EF6384A, 0xBF38AA3B};
    LogSplit s = log_split(kc::intr::fz(x), 0x3F3504F3, 23);
    float f = add_(s.m, -1.0f);
    float p = fma_(from_bits(c[0]), f, from_bits(c[1]));
    for (int i = 2; i < 10; ++i) p = fma_(p, f, from_bits(c[i]));
    float r = add_(s.e, fma_(f, from_bits(0x3FB8AA3B), mul_(f, mul_(f, p))));
    if (s.u >= 0x7F800000u) r = fma_(s.y, __builtin_inff(), __builtin_inff());
    return s.y == 0.0f ? -__builtin_inff() : r;
}

// log10f: logf's result times log10(e) rounded to float (0 gives -inf either way).
inline float gpu_log10f(float x) { return gpumath::mul_(gpu_logf(x), gpumath::from_bits(0x3EDE5BD9)); }

// cbrtf: r = |x|^(-2/3) by ex2.approx.ftz(lg2.approx(|x|) * -2/3), s = |x| r, one Newton step
// s + s (1 - s (r s)) / 3, the sign of x; +-0 and +-inf themselves (x + x == x).
inline float gpu_cbrtf(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float a = fabsf(x);
    float r = ex2_ftz(mul_(lg2_approx(a), from_bits(0xBF2AAAAB)));
    float s = mul_(a, r);
    float e = fma_(s, -mul_(r, s), 1.0f);
    float v = fma_(s, mul_(e, from_bits(0x3EAAAAAB)), s);
    float twice = add_(x, x);
    return twice == x ? twice : (x < 0.0f ? -v : v);
}

// powf(x, y) = 2^(y log2 |x|): log2 |x| as a double-float hi + lo (u = 2f/(m + 1) by
// rcp.approx.ftz, its rounding error put back, u log2 e + u^3 p(u^2) with log2 e in two
// parts), y times it as z + zl (the product's error by a fused step), 2^(z - n + zl) for
// n = rint(z) by a polynomial, times 2^n as two powers of two (so that 2^n may be subnormal);
// 0 or inf past |z| = 152. Then the special cases in the PTX's order: 1 for x = 1 or y = 0,
// x + y for NaN, zeros and infinities of x by their bits, 1 for x = -1 and y = +-inf, and for
// x < 0 the result negated for odd integral y and NaN for y not integral.
inline float gpu_powf(float x, float y) {
    using namespace gpumath;
    static const uint32_t c[6] = {0x391FCB8E, 0x3AAF85ED, 0x3C1D9856, 0x3D6357BB, 0x3E75FDEC, 0x3F317218};
    x = kc::intr::fz(x);
    y = kc::intr::fz(y);
    float h = truncf(mul_(y, 0.5f)), odd = fabsf(sub_(y, add_(h, h)));   // |y mod 2|: 1 for odd integers
    float ax = fabsf(x);
    LogSplit s = log_split(ax, 0x3F3504F3, 24);
    const float log2e = from_bits(0x3FB8AA3B);
    float f = add_(s.m, -1.0f), rc = rcp_ftz(add_(s.m, 1.0f));
    float u = mul_(add_(f, f), rc), u2 = mul_(u, u);
    float d = sub_(f, u);   // exact: u is within a factor of 2 of f
    float ul = mul_(rc, fma_(-u, f, add_(d, d)));   // (2f - u (m + 1)) / (m + 1): u's rounding error
    float p = fma_(from_bits(0x3A2C32E4), u2, from_bits(0x3B52E7DB));
    p = fma_(p, u2, from_bits(0x3C93BB73));
    p = mul_(fma_(p, u2, from_bits(0x3DF6384F)), u2);
    float hi = fma_(u, log2e, s.e);
    float lo = fma_(u, log2e, sub_(s.e, hi));
    lo = fma_(u, from_bits(0x32A55E34), fma_(ul, log2e, lo));
    lo = fma_(p, u, fma_(mul_(p, 3.0f), ul, lo));
    float l = add_(hi, lo), ll = add_(lo, -add_(l, -hi));
    float z = mul_(l, y), zl = fma_(ll, y, fma_(l, y, -z));
    float n = rintf(z), r = add_(zl, sub_(z, n));
    float q = fma_(from_bits(c[0]), r, from_bits(c[1]));
    for (int i = 2; i < 6; ++i) q = fma_(q, r, from_bits(c[i]));
    q = fma_(q, r, 1.0f);
    uint32_t low = n > 0.0f ? 0u : 0x83000000u;   // 2^127 2^(n - 127), or 2^-123 2^(n + 123)
    float v = mul_(mul_(q, from_bits(low + 0x7F000000u)), from_bits(((uint32_t)f2i(n) << 23) - low));
    if (fabsf(z) > 152.0f) v = z < 0.0f ? 0.0f : __builtin_inff();
    if (x == 1.0f || y == 0.0f) return 1.0f;
    if (x != x || y != y) return add_(x, y);
    if (x == 0.0f || ax == __builtin_inff()) {   // +-0 or +-inf, inverted for y < 0, signed for odd y
        uint32_t w = bits(add_(x, x)) ^ (y < 0.0f ? 0x7F800000u : 0u);
        return from_bits(odd == 1.0f ? w : w & 0x7FFFFFFFu);
    }
    if (x == -1.0f && fabsf(y) == __builtin_inff()) return 1.0f;
    if (!(x < 0.0f)) return v;
    return floorf(y) != y ? from_bits(0x7FFFFFFF) : (odd == 1.0f ? -v : v);
}

// __powf (and --use_fast_math's powf): ex2.approx(y * lg2.approx(x)), every step .ftz under KC_FTZ.
inline float gpu_fast_powf(float x, float y) {
    return gpumath::ex2(gpumath::mul_(kc::intr::fz(y), gpumath::lg2_approx(x)));
}

// __tanf (and --use_fast_math's tanf): div.approx(sin.approx(x), cos.approx(x)); the sine is never
// subnormal (nor the quotient), so .ftz changes nothing.
inline float gpu_fast_tanf(float x) {
    return gpu_fdividef(gpumath::sincos_approx(x, false), gpumath::sincos_approx(x, true));
}

// e^v 2^(bias - 127), as sinhf, coshf and erfcf form it: j = trunc(v log2 e) (+-126 at most),
// r = v - j ln 2 in two fused steps, 2^(j + bias - 127) from j + 1.5 2^23 + bias's bits, times
// ex2.approx.ftz(r log2 e).
namespace gpumath {
inline float exp_scaled(float v, uint32_t bias) {
    float j = truncf(mul_(v, from_bits(0x3FB8AA3B)));
    if (fabsf(j) > 126.0f) j = copysignf(126.0f, j);
    float r = fma_(j, from_bits(0xBF317218), v);
    r = fma_(j, from_bits(0x3102E308), r);
    float scale = from_bits(bits(add_(j, from_bits(0x4B400000u + bias))) << 23);
    return mul_(ex2_ftz(mul_(r, from_bits(0x3FB8AA3B))), scale);
}
// sinhf and coshf: 2e +- 1/(8e) for e = e^|x| / 4, the division div.approx.ftz. sinhf below
// |x| = 1 (and for NaN) is an odd polynomial instead.
inline float exp_halves(float a, float eighth) {
    float e = exp_scaled(a, 125);
    return fma_(2.0f, e, div_approx_ftz(eighth, e));
}
}  // namespace gpumath
inline float gpu_sinhf(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float a = fabsf(x), x2 = mul_(x, x);
    float p = fma_(from_bits(0x363D0ADA), x2, from_bits(0x394FFF49));
    p = fma_(p, x2, from_bits(0x3C08889A));
    p = fma_(p, x2, from_bits(0x3E2AAAAB));
    float small = fma_(mul_(x2, p), x, x);
    return a >= 1.0f ? copysignf(exp_halves(a, -0.125f), x) : small;
}
inline float gpu_coshf(float x) { return gpumath::exp_halves(fabsf(kc::intr::fz(x)), 0.125f); }

// erfcf: for a = |x|, q = (a - 4) / (a + 4) by rcp.approx.ftz and one correction, p(q) a
// polynomial, m = p / (2a + 1) by rcp.approx.ftz and one correction, times e^(-a^2) (the square's
// rounding error put back: e^-(a a) (1 + (a a - a^2))); 0 past 10.055 (0x4120E148), 2 minus it for
// x < 0.
namespace gpumath {
inline float erfc_(float x) {
    static const uint32_t c[11] = {0x3A69A091, 0x3BE6E05B, 0xBC81FB4B, 0x3D15373B, 0xBD887C5A, 0x3DC021D5,
                                   0xBDCED424, 0x3D8B74DE, 0x3C7BF170, 0xBE0EF8D4, 0x3F9DD2C9};
    float a = fabsf(x);
    float rc = rcp_ftz(add_(a, 4.0f));
    float q = mul_(add_(a, -4.0f), rc);
    float e = fma_(-4.0f, add_(q, 1.0f), a);
    q = fma_(rc, fma_(-q, a, e), q);
    float p = fma_(from_bits(c[0]), q, from_bits(c[1]));
    for (int i = 2; i < 11; ++i) p = fma_(p, q, from_bits(c[i]));
    float rd = rcp_ftz(fma_(2.0f, a, 1.0f));
    float m = mul_(p, rd);
    m = fma_(sub_(fma_(a, mul_(m, -2.0f), p), m), rd, m);
    float sq = mul_(a, a);
    float g = exp_scaled(-sq, 127);
    float v = mul_(m, fma_(g, fma_(-a, a, sq), g));
    if (a > from_bits(0x4120E148)) v = 0.0f;
    return x < 0.0f ? sub_(2.0f, v) : v;
}
}  // namespace gpumath
inline float gpu_erfcf(float x) { return gpumath::erfc_(kc::intr::fz(x)); }

// normcdff: erfc(-x / sqrt 2) / 2, x clamped to +-14.5; -x / sqrt 2 as hi + lo (the product's
// rounding error by a fused step, plus x times the constant's own error) rounded to t, and below
// x = -1 the erfc corrected by its derivative times what t lost: v - 2 t v (hi - t + lo).
inline float gpu_normcdff(float x) {
    using namespace gpumath;
    x = kc::intr::fz(x);
    float xc = fabsf(x) > 14.5f ? copysignf(14.5f, x) : x;
    float hi = mul_(xc, from_bits(0xBF3504F3));
    float lo = fma_(xc, from_bits(0xB24FE77A), fma_(xc, from_bits(0xBF3504F3), -hi));
    float t = add_(hi, lo);
    float v = erfc_(t);
    if (xc < -1.0f) v = fma_(mul_(mul_(t, -2.0f), v), add_(sub_(hi, t), lo), v);
    return mul_(v, 0.5f);
}

// asinf and acosf: past |x| = 0.56 (0x3F0F5C29) the argument becomes sqrt((1 - |x|) / 2), from
// rsqrt.approx.ftz and one Newton step (0 at |x| = 1), and asin(x) = pi/2 - 2 asin of it, acos(x)
// = 2 asin of it (pi minus that for x < 0); below, x itself. Each its own odd polynomial; pi/2 is
// the fused product 0x3F6EE581 * 0x3FD774EB.
namespace gpumath {
inline float half_turn_root(float a) {
    float h = fma_(0.5f, -a, 0.5f);
    float rs = rsqrt(h), s = mul_(h, rs);
    float e = fma_(-s, mul_(rs, 0.5f), 0.5f);
    return a == 1.0f ? 0.0f : fma_(s, e, s);
}
inline float odd_poly(float y, const uint32_t (&c)[5]) {
    float y2 = mul_(y, y);
    float p = fma_(from_bits(c[0]), y2, from_bits(c[1]));
    for (int i = 2; i < 5; ++i) p = fma_(p, y2, from_bits(c[i]));
    return fma_(mul_(y2, p), y, y);
}
}  // namespace gpumath
inline float gpu_asinf(float x) {
    using namespace gpumath;
    static const uint32_t c[5] = {0x3D4DD2F7, 0x3C99CA97, 0x3D3F90E8, 0x3D993CCF, 0x3E2AAC04};
    x = kc::intr::fz(x);
    float a = fabsf(x);
    bool far = a > from_bits(0x3F0F5C29);
    float r = odd_poly(far ? half_turn_root(a) : a, c);
    if (far) r = fma_(from_bits(0x3F6EE581), from_bits(0x3FD774EB), mul_(r, -2.0f));
    return r <= __builtin_inff() ? copysignf(r, x) : r;
}
inline float gpu_acosf(float x) {
    using namespace gpumath;
    static const uint32_t c[6] = {0x3D10ECEF, 0x3C8B1ABB, 0x3CFC028C, 0x3D372139, 0x3D9993DB, 0x3E2AAAC6};
    x = kc::intr::fz(x);
    float a = fabsf(x);
    bool far = a > from_bits(0x3F0F5C29);
    float z = copysignf(far ? half_turn_root(a) : a, x), z2 = mul_(z, z);
    float p = fma_(from_bits(c[0]), z2, from_bits(c[1]));
    for (int i = 2; i < 6; ++i) p = fma_(p, z2, from_bits(c[i]));
    float r = fma_(mul_(z2, p), z, z);
    float v = x > from_bits(0x3F0F5C29) ? r : fma_(from_bits(0x3F6EE581), from_bits(0x3FD774EB), far ? r : -r);
    return far ? add_(v, v) : v;
}

// atan2f(y, x): q = min(|x|, |y|) / max(|x|, |y|) by div.rn, atan(q) = q + q^3 p(q^2), moved to
// its octant (pi/2 -+ it, pi - it, pi/2 and pi as fused products); pi/4 or 3pi/4 where |x| = |y|,
// 0 or pi where both are 0, with the sign of y; NaN if either is NaN.
inline float gpu_atan2f(float y, float x) {
    using namespace gpumath;
    static const uint32_t c[8] = {0x3B33710B, 0xBC807748, 0x3D2CDAB2, 0xBD992D10,
                                  0x3DD9EA6C, 0xBE117CB1, 0x3E4CBCE0, 0xBEAAAA7D};
    x = kc::intr::fz(x);
    y = kc::intr::fz(y);
    float ax = fabsf(x), ay = fabsf(y);
    bool steep = ay > ax;
    float den = steep ? ay : ax;
    float q = kc::intr::fz(kc::intr::opaque((steep ? ax : ay) / den)), q2 = mul_(q, q);
    float p = fma_(from_bits(c[0]), q2, from_bits(c[1]));
    for (int i = 2; i < 8; ++i) p = fma_(p, q2, from_bits(c[i]));
    float r = fma_(mul_(q2, p), q, q);
    bool left = __builtin_signbit(x);
    if (steep) r = fma_(from_bits(0x3F6EE581), from_bits(0x3FD774EB), left ? r : -r);
    else if (left) r = fma_(from_bits(0x3FEEE581), from_bits(0x3FD774EB), -r);
    if (ax == ay) r = from_bits(left ? 0x4016CBE4 : 0x3F490FDB);
    if (den == 0.0f) r = from_bits(left ? 0x40490FDB : 0);
    float sum = add_(ax, ay);
    return sum != sum ? sum : copysignf(r, y);
}

// __expf: ex2.approx of x * log2(e) (ex2.approx.ftz under KC_FTZ, CuPy's -ftz=true).
inline float gpu_fast_expf(float x) { return gpumath::ex2(gpumath::mul_(x, gpumath::from_bits(0x3FB8AA3B))); }

// __exp10f: ex2.approx of x * log2(10), one constant (as --use_fast_math's exp10f, .ftz there).
inline float gpu_fast_exp10f(float x) { return gpumath::ex2(gpumath::mul_(kc::intr::fz(x), gpumath::from_bits(0x40549A78))); }

// __fdividef: div.approx, x times rcp.approx.ftz(y) (gpumath::div_approx_ftz under KC_FTZ). For
// 2^126 < |y| the reciprocal flushes to zero, and so does the quotient. A subnormal divisor
// without KC_FTZ, which the table does not cover, gives the IEEE quotient (not the GPU's bits).
inline float gpu_fdividef(float x, float y) {
    if (KC_FTZ) return gpumath::div_approx_ftz(x, y);
    if (y != 0.0f && fabsf(y) < 0x1p-126f) return x / y;
    return x * gpumath::rcp_ftz(y);
}

// --use_fast_math's exp2f: ex2.approx.ftz.
inline float gpu_fast_exp2f(float x) { return gpumath::ex2_ftz(x); }

// sqrtf: sqrt.rn, whose .ftz form (under KC_FTZ: CuPy's -ftz=true) reads a subnormal argument as
// zero of its sign; the result is never subnormal.
inline float gpu_sqrtf(float x) { return sqrtf(kc::intr::fz(x)); }

// --use_fast_math's sqrtf: sqrt.approx.ftz; and its 1 / sqrtf(x), one rsqrt.approx.ftz (the
// rewriter drops the `1 /` and calls this on x).
inline float gpu_fast_sqrtf(float x) { return gpumath::sqrt_approx(x, true); }
inline float gpu_fast_rsqrtf(float x) { return gpumath::rsqrt(kc::intr::ftz(x)); }

// __log2f, __logf and __log10f (and --use_fast_math's log2f, logf and log10f): lg2.approx, the
// last two times ln 2 and log10(2) rounded to float, as nvcc's PTX multiplies (.ftz under KC_FTZ).
inline float gpu_fast_log2f(float x) { return gpumath::lg2_approx(x); }
inline float gpu_fast_logf(float x) { return gpumath::mul_(gpumath::lg2_approx(x), gpumath::from_bits(0x3F317218)); }
inline float gpu_fast_log10f(float x) { return gpumath::mul_(gpumath::lg2_approx(x), gpumath::from_bits(0x3E9A209B)); }

// --use_fast_math's division, which nvcc compiles to div.approx.ftz for floats (the rewriter's
// `::kc::fast_div_{a, b}()` and `::kc::fast_div_to_{a, b}()` for `a / b` and `a /= b`, operands
// taken as kc_gpu_arith.h's helpers take them); any other type divides as written.
template <class kc_A, class kc_B> constexpr auto fast_div(kc_A kc_a, kc_B kc_b) {
    if constexpr (arith::same<decltype(kc_a / kc_b), float>::value) return gpu_fdividef((float)kc_a, (float)kc_b);
    else return kc_a / kc_b;
}
template <class kc_A, class kc_B> struct fast_div_ {
    kc_A kc_a;
    kc_B kc_b;
    constexpr auto operator()() { return fast_div(kc_a, kc_b); }
};
template <class kc_A, class kc_B> fast_div_(kc_A, kc_B) -> fast_div_<kc_A, kc_B>;
template <class kc_A, class kc_B> struct fast_div_to_ {
    kc_A& kc_a;
    kc_B kc_b;
    constexpr kc_A& operator()() { return kc_a = (kc_A)fast_div(kc_a, kc_b); }
};
template <class kc_A, class kc_B> fast_div_to_(kc_A&, kc_B) -> fast_div_to_<kc_A, kc_B>;

// --use_fast_math's float quotient held for the sums that read it (kc_gpu_arith.h's hold_mul_):
// `::kc::hold_div_{kc_held_N, a, b}()` and `::kc::hold_div_to_{kc_held_N, v, b}()` for `v /= b`.
template <class kc_A, class kc_B> struct hold_div_ {
    held_product<float>& kc_h;
    kc_A kc_a;
    kc_B kc_b;
    constexpr float operator()() { kc_h.kc_a = (float)kc_a; kc_h.kc_b = (float)kc_b; return fast_div(kc_h.kc_a, kc_h.kc_b); }
};
template <class kc_A, class kc_B> hold_div_(held_product<float>&, kc_A, kc_B) -> hold_div_<kc_A, kc_B>;
template <class kc_V, class kc_B> struct hold_div_to_ {
    held_product<float>& kc_h;
    kc_V& kc_v;
    kc_B kc_b;
    constexpr kc_V& operator()() {
        kc_h.kc_b = (float)kc_b;
        kc_h.kc_a = (float)kc_v;
        return kc_v = (kc_V)fast_div(kc_h.kc_a, kc_h.kc_b);
    }
};
template <class kc_V, class kc_B> hold_div_to_(held_product<float>&, kc_V&, kc_B) -> hold_div_to_<kc_V, kc_B>;

// --use_fast_math's a / b ± c and c ± a / b where the quotient and the sum are floats: ptxas
// fuses div.approx.ftz's multiply by the reciprocal with the add, one rounding, flushed:
// fma(±a, rcp.approx.ftz(b), ±c) (an H100 gave it for every one of 4,194,304 pairs of
// x / y + z, logs/2026-12-07-h100-lg2-table.md). Other types compute as written, the quotient
// fast_div's. kc_CFirst: c comes first in the source (c ± a / b), kc_Neg: the second term is
// subtracted. The rewriter's `::kc::quotient_add_{a, b, c}()` and the like take the operands in
// the source's order, as kc_gpu_arith.h's helpers do.
template <bool kc_CFirst, bool kc_Neg, class kc_A, class kc_B, class kc_C>
constexpr auto quotient_sum(kc_A kc_a, kc_B kc_b, kc_C kc_c) {
    using kc_Q = decltype(fast_div(kc_a, kc_b));
    if constexpr (arith::same<kc_Q, float>::value && arith::same<decltype(kc_Q() + kc_c), float>::value) {
        const float kc_x = kc::intr::fz((float)kc_a), kc_z = kc::intr::fz((float)kc_c);
        const bool kc_negq = kc_CFirst && kc_Neg, kc_negc = !kc_CFirst && kc_Neg;
        return kc::intr::fz(fmaf(kc_negq ? -kc_x : kc_x, gpumath::rcp_ftz((float)kc_b), kc_negc ? -kc_z : kc_z));
    } else if constexpr (kc_CFirst) {
        return kc_Neg ? kc_c - fast_div(kc_a, kc_b) : kc_c + fast_div(kc_a, kc_b);
    } else {
        return kc_Neg ? fast_div(kc_a, kc_b) - kc_c : fast_div(kc_a, kc_b) + kc_c;
    }
}
#define KC_QUOTIENT_SUM(kc_name, kc_CFirst, kc_Neg, kc_P, kc_Q, kc_R, kc_call)                    \
    template <class kc_P, class kc_Q, class kc_R> struct kc_name {                                  \
        kc_P kc_p;                                                                                  \
        kc_Q kc_q;                                                                                  \
        kc_R kc_r;                                                                                  \
        constexpr auto operator()() { return quotient_sum<kc_CFirst, kc_Neg> kc_call; }             \
    };                                                                                              \
    template <class kc_P, class kc_Q, class kc_R> kc_name(kc_P, kc_Q, kc_R) -> kc_name<kc_P, kc_Q, kc_R>;
KC_QUOTIENT_SUM(quotient_add_, false, false, kc_A, kc_B, kc_C, (kc_p, kc_q, kc_r))
KC_QUOTIENT_SUM(quotient_sub_, false, true, kc_A, kc_B, kc_C, (kc_p, kc_q, kc_r))
KC_QUOTIENT_SUM(add_quotient_, true, false, kc_C, kc_A, kc_B, (kc_q, kc_r, kc_p))
KC_QUOTIENT_SUM(sub_quotient_, true, true, kc_C, kc_A, kc_B, (kc_q, kc_r, kc_p))
#undef KC_QUOTIENT_SUM
// s += a / b and s -= a / b: s = s ± a / b, fused as quotient_sum fuses it (the rewriter's
// `::kc::add_quotient_to_{s, a, b}()`).
template <bool kc_Neg, class kc_S, class kc_A, class kc_B> struct quotient_to_ {
    kc_S& kc_s;
    kc_A kc_a;
    kc_B kc_b;
    constexpr kc_S& operator()() { return kc_s = (kc_S)quotient_sum<true, kc_Neg>(kc_a, kc_b, kc_s); }
};
template <class kc_S, class kc_A, class kc_B> struct add_quotient_to_ : quotient_to_<false, kc_S, kc_A, kc_B> {};
template <class kc_S, class kc_A, class kc_B> struct sub_quotient_to_ : quotient_to_<true, kc_S, kc_A, kc_B> {};
template <class kc_S, class kc_A, class kc_B> add_quotient_to_(kc_S&, kc_A, kc_B) -> add_quotient_to_<kc_S, kc_A, kc_B>;
template <class kc_S, class kc_A, class kc_B> sub_quotient_to_(kc_S&, kc_A, kc_B) -> sub_quotient_to_<kc_S, kc_A, kc_B>;
}  // namespace kc

inline float __sinf(float x) { return kc::gpumath::sincos_approx(x, false); }
inline float __cosf(float x) { return kc::gpumath::sincos_approx(x, true); }
inline void __sincosf(float x, float* s, float* c) { *s = __sinf(x); *c = __cosf(x); }
