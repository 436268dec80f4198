// CUDA's device intrinsics and the math functions the C library lacks, computed as an NVIDIA
// GPU computes them (CUDA Math API; CUDA C++ Programming Guide, "Mathematical Functions";
// PTX ISA for conversions and bit operations), checked against an H100 (logs/2026-11-23-
// intrinsics-gpu.md).
//
// Only C headers: libclang parses this before every cold compile. Works as C++17 and C++20,
// under g++ 11 and later, and under -fsanitize=thread. Functions the C library already has
// (expf, sinf, fmaf, exp10f, sincosf, j0f, ...) are not redefined; where glibc 2.41 and 2.42
// added CUDA's names (sinpi, cospi, rsqrt: C23), theirs are used.
//
// Macros it defines: clock() (CUDA's device clock; without it a kernel would get C's clock(),
// the process's CPU time: see "time" below), KC_FTZ (float subnormals flushed, 1 unless set
// before: see below) and KC_LIBC_HAS_SINPI / KC_LIBC_HAS_RSQRT. Define KC_NO_CLOCK_MACRO
// before including it to keep C's clock(). Its helpers live in namespace kc::intr.
#pragma once
#include <fenv.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

// C23 names glibc declares itself from 2.41 (sinpi, cospi) and 2.42 (rsqrt): a second,
// C++-linkage definition would clash with them.
#if defined(__GLIBC__) && defined(__GLIBC_MINOR__) && defined(__USE_GNU)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 41)
#define KC_LIBC_HAS_SINPI 1
#endif
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 42)
#define KC_LIBC_HAS_RSQRT 1
#endif
#endif
// exp10 and sincos are GNU extensions: declared by glibc under _GNU_SOURCE (which g++ and
// clang++ define), present in libm regardless.
#if defined(__GLIBC__) && !defined(__USE_GNU)
extern "C" {
double exp10(double) noexcept;
float exp10f(float) noexcept;
void sincos(double, double*, double*) noexcept;
void sincosf(float, float*, float*) noexcept;
}
#endif

// Single-precision subnormals. NVRTC and nvcc keep them by default (-ftz=false), but CuPy
// compiles every kernel with -ftz=true (cupy/cuda/compiler.py appends it), so on the GPUs this
// project's users have, float intrinsics and math functions flush subnormal arguments and
// results to zero of the same sign; double precision never does. KC_FTZ=1 (the default) does
// that here; -DKC_FTZ=0 keeps IEEE subnormals, as nvcc or NVRTC without CuPy do. Plain float
// arithmetic in the kernel (a * b) is the processor's and keeps subnormals either way.
#ifndef KC_FTZ
#define KC_FTZ 1
#endif

namespace kc {
namespace intr {
template <class T> struct ident { using type = T; };
template <class T> T&& declval_() noexcept;
// Keeps the compiler from fusing an operation with its neighbours (a multiply and an add
// into an FMA, where the target has one) or folding it: CUDA's __fmul_rn and the like are
// never contracted.
inline float opaque(float v) { __asm__("" : "+x"(v)); return v; }
inline double opaque(double v) { __asm__("" : "+x"(v)); return v; }
// f() under the rounding mode `mode`. f reads its operands from volatile copies (so not
// before the mode is set) and its result is pinned in memory before the mode is restored
// (so not computed after): g++ assumes round-to-nearest and would otherwise fold or move it.
template <class T, class F>
inline T rounded(int mode, F f) {
    const int old = fegetround();
    fesetround(mode);
    T r = f();
    __asm__ __volatile__("" : "+m"(r) : : "memory");
    fesetround(old);
    return r;
}
// Rounding a float or double to an integral value, as cvt.rni/rzi/rpi/rmi do.
enum Dir { RN, RZ, RU, RD };
inline double to_integral(double x, int dir) {
    if (dir == RZ) return trunc(x);
    if (dir == RU) return ceil(x);
    if (dir == RD) return floor(x);
    double f = floor(x), d = x - f;   // exact
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;   // ties to even
    return f;
}
// Float to integer with the GPU's saturation: values past either end of the type's range give
// the nearest end (lo: the least value, hi: one past the greatest, both exact as doubles);
// NaN gives `nan`, which is 0 from float to 32 bits but the pattern 0x80...0 from a double or
// to 64 bits (seen on an H100).
template <class I>
inline I to_int(double x, int dir, double lo, double hi, I imin, I imax, I nan) {
    if (x != x) return nan;
    double r = to_integral(x, dir);
    return r <= lo ? imin : r >= hi ? imax : (I)r;
}
constexpr long double kPi = 3.141592653589793238462643383279502884L;
constexpr long double kSqrtPi = 1.772453850905516027298167483341145183L;
constexpr long double kTwoOverSqrtPi = 1.128379167095512573896158903121545172L;
constexpr long double kSqrt2 = 1.414213562373095048801688724209698079L;
constexpr long double kLnSqrtPi = 0.572364942924700087071713675676529356L;
// Subnormal floats to zero of the same sign.
inline float ftz(float x) { return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x; }
// The same where the program is compiled with -ftz=true (KC_FTZ above), else the value itself.
inline float fz(float x) { return KC_FTZ ? ftz(x) : x; }
// A float operation's result under KC_FTZ: zero of its sign where it is tiny, which a GPU
// decides after rounding, as IEEE 754 allows: where the exact value rounded (in the operation's
// mode) to 24 bits with no exponent limit is below FLT_MIN. So a product that rounds up to
// FLT_MIN stays FLT_MIN, one that only subnormal rounding brings up to it is flushed (both seen
// on an H100). op(T()) computes the operation in type T from volatile copies of its operands
// (see rounded): in float for the result, in double (rounded to odd, then to 24 bits of a
// value scaled by 2^64) for the rare result of exactly FLT_MIN. Round to nearest is ambient.
template <class Op>
inline float fop(int mode, Op op) {
    auto f = [&] { return op(0.0f); };
    float r = mode == FE_TONEAREST ? opaque(f()) : rounded<float>(mode, f);
    if (!KC_FTZ || !(fabsf(r) <= FLT_MIN)) return r;
    if (fabsf(r) < FLT_MIN) return copysignf(0.0f, r);
    auto d = [&] { return op(0.0); };
    double lo = rounded<double>(FE_TOWARDZERO, d), hi = rounded<double>(FE_UPWARD, d);
    if (lo != hi) {   // inexact: round to odd, so that rounding again to 24 bits is exact
        uint64_t bits;
        memcpy(&bits, &lo, 8);
        bits |= 1;
        memcpy(&lo, &bits, 8);
    }
    float scaled = rounded<float>(mode, [&] { volatile double v = lo * 0x1p64; return (float)v; });
    return fabsf(scaled) < 0x1p-62f ? copysignf(0.0f, r) : r;
}
// A long double value rounded to float, flushed like a GPU's float math under KC_FTZ.
inline float fzl(long double v) {
    float r = (float)v;
    if (KC_FTZ && fabsl(v) < FLT_MIN && fabsf((float)(v * 0x1p64L)) < 0x1p-62f) return copysignf(0.0f, r);
    return r;
}
// min and max as a GPU's min/max instructions: a NaN operand gives the other one, and -0 is
// below +0 (the C library's fmin may return either zero).
template <class T> inline T fmin_(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return __builtin_signbit(a) ? a : b;
    return a < b ? a : b;
}
template <class T> inline T fmax_(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return __builtin_signbit(a) ? b : a;
    return a > b ? a : b;
}
}  // namespace intr
}  // namespace kc

// ---- min and max: CUDA's overloads exactly (math_functions.hpp) ------------------------------
// Mixed signed and unsigned arguments compare as unsigned (min(-1, 1u) is 1u); the float and
// double ones are fminf/fmin as a GPU computes them: a NaN argument gives the other one, -0 is
// below +0, and float arguments follow KC_FTZ.
#define KC_MINMAX_INT(A, B, R)                                                                 \
    inline constexpr R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }                     \
    inline constexpr R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
KC_MINMAX_INT(int, int, int)
KC_MINMAX_INT(unsigned int, unsigned int, unsigned int)
KC_MINMAX_INT(int, unsigned int, unsigned int)
KC_MINMAX_INT(unsigned int, int, unsigned int)
KC_MINMAX_INT(long, long, long)
KC_MINMAX_INT(unsigned long, unsigned long, unsigned long)
KC_MINMAX_INT(long, unsigned long, unsigned long)
KC_MINMAX_INT(unsigned long, long, unsigned long)
KC_MINMAX_INT(long long, long long, long long)
KC_MINMAX_INT(unsigned long long, unsigned long long, unsigned long long)
KC_MINMAX_INT(long long, unsigned long long, unsigned long long)
KC_MINMAX_INT(unsigned long long, long long, unsigned long long)
#undef KC_MINMAX_INT
inline float min(float a, float b) { return kc::intr::fmin_(kc::intr::fz(a), kc::intr::fz(b)); }
inline float max(float a, float b) { return kc::intr::fmax_(kc::intr::fz(a), kc::intr::fz(b)); }
inline double min(double a, double b) { return kc::intr::fmin_(a, b); }
inline double max(double a, double b) { return kc::intr::fmax_(a, b); }
inline double min(float a, double b) { return kc::intr::fmin_((double)kc::intr::fz(a), b); }
inline double max(float a, double b) { return kc::intr::fmax_((double)kc::intr::fz(a), b); }
inline double min(double a, float b) { return kc::intr::fmin_(a, (double)kc::intr::fz(b)); }
inline double max(double a, float b) { return kc::intr::fmax_(a, (double)kc::intr::fz(b)); }
// CUDA declares these without defining them (built-ins), so a kernel may define its own with
// the same signature, as NVRTC accepts: here they are templates, which a kernel's own
// function of that signature outranks.
template <class = void> constexpr unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
template <class = void> constexpr unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
template <class = void> constexpr long long llmin(long long a, long long b) { return a < b ? a : b; }
template <class = void> constexpr long long llmax(long long a, long long b) { return a > b ? a : b; }
template <class = void> constexpr unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
template <class = void> constexpr unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---- integer intrinsics ----------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
// Byte n of the result is byte (s >> 4n) & 7 of the eight bytes {y, x} (x the low four).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int n = 0; n < 4; ++n) r |= (unsigned int)((v >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
    return r;
}
// The n-th set bit of mask from bit base up (offset > 0) or down (offset < 0), offset 0: base
// itself if set; 0xffffffff where there is none (PTX fns).
inline unsigned int __fns(unsigned int mask, unsigned int base, int offset) {
    if (offset == 0) return base < 32 && ((mask >> base) & 1) ? base : 0xffffffffu;
    int pos = (int)base, step = offset > 0 ? 1 : -1;
    long long count = (offset > 0 ? (long long)offset : -(long long)offset) - 1;
    for (; pos >= 0 && pos < 32; pos += step)
        if ((mask >> pos) & 1) {
            if (count == 0) return (unsigned int)pos;
            --count;
        }
    return 0xffffffffu;
}
// 24-bit multiplies: the low 24 bits of each operand (sign-extended for __mul24), the low 32
// bits of the 48-bit product.
inline int __mul24(int x, int y) {
    long long a = (int)((unsigned int)x << 8) >> 8, b = (int)((unsigned int)y << 8) >> 8;
    return (int)(unsigned int)(a * b);
}
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
    return z + (unsigned int)(x > y ? (long long)x - y : (long long)y - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
// Averages without overflow: (x + y) >> 1, and (x + y + 1) >> 1 rounded.
inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y) >> 1); }
inline unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y + 1) >> 1); }
// Funnel shifts of the 64 bits hi:lo; the shift wraps mod 32, or clamps to 32 (the c forms).
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)(((((unsigned long long)hi << 32) | lo) << (shift & 31)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)(((((unsigned long long)hi << 32) | lo) << (shift > 32 ? 32 : shift)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (shift > 32 ? 32 : shift));
}
// Dot products of packed 8- and 16-bit lanes with a 32-bit accumulator (wrapping).
inline int __dp4a(int a, int b, int c) {
    unsigned int s = (unsigned int)c;
    for (int i = 0; i < 4; ++i) s += (unsigned int)((int)(signed char)(a >> 8 * i) * (int)(signed char)(b >> 8 * i));
    return (int)s;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i) c += ((a >> 8 * i) & 0xffu) * ((b >> 8 * i) & 0xffu);
    return c;
}
// __dp2a_lo: a's two 16-bit halves times b's bytes 0 and 1; __dp2a_hi: times bytes 2 and 3.
inline int __dp2a_lo(int a, int b, int c) {
    return (int)((unsigned int)c + (unsigned int)((int)(short)a * (int)(signed char)b) +
                 (unsigned int)((int)(short)(a >> 16) * (int)(signed char)(b >> 8)));
}
inline int __dp2a_hi(int a, int b, int c) { return __dp2a_lo(a, (int)((unsigned int)b >> 16), c); }
inline unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) {
    return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
}
inline unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) { return __dp2a_lo(a, b >> 16, c); }
// The vector forms (char4/uchar4, short2/ushort2): the lanes packed as above.
namespace kc {
namespace intr {
int dp_acc(signed char);
unsigned int dp_acc(unsigned char);
int dp_acc(short);
unsigned int dp_acc(unsigned short);
template <class V> inline unsigned int pack8(const V& v) {
    return (unsigned int)(unsigned char)v.x | (unsigned int)(unsigned char)v.y << 8 |
           (unsigned int)(unsigned char)v.z << 16 | (unsigned int)(unsigned char)v.w << 24;
}
template <class V> inline unsigned int pack16(const V& v) {
    return (unsigned int)(unsigned short)v.x | (unsigned int)(unsigned short)v.y << 16;
}
}  // namespace intr
}  // namespace kc
template <class V, class R = decltype(kc::intr::dp_acc(kc::intr::declval_<V>().w))>
inline R __dp4a(V a, V b, typename kc::intr::ident<R>::type c) {
    return __dp4a((R)kc::intr::pack8(a), (R)kc::intr::pack8(b), c);
}
template <class V2, class V4, class R = decltype(kc::intr::dp_acc(kc::intr::declval_<V4>().w)),
          class = decltype(kc::intr::dp_acc(kc::intr::declval_<V2>().y))>
inline R __dp2a_lo(V2 a, V4 b, typename kc::intr::ident<R>::type c) {
    return __dp2a_lo((R)kc::intr::pack16(a), (R)kc::intr::pack8(b), c);
}
template <class V2, class V4, class R = decltype(kc::intr::dp_acc(kc::intr::declval_<V4>().w)),
          class = decltype(kc::intr::dp_acc(kc::intr::declval_<V2>().y))>
inline R __dp2a_hi(V2 a, V4 b, typename kc::intr::ident<R>::type c) {
    return __dp2a_hi((R)kc::intr::pack16(a), (R)kc::intr::pack8(b), c);
}

// ---- SIMD intrinsics: 2 lanes of 16 bits or 4 of 8 in an unsigned int ----------------------
namespace kc {
namespace intr {
template <int W, bool S> inline long long lane(unsigned int v, int i) {
    unsigned int u = (v >> (W * i)) & ((1u << W) - 1);
    return S && (u >> (W - 1)) ? (long long)u - (1ll << W) : (long long)u;
}
template <int W, bool S> inline long long sat(long long v) {
    const long long lo = S ? -(1ll << (W - 1)) : 0, hi = S ? (1ll << (W - 1)) - 1 : (1ll << W) - 1;
    return v < lo ? lo : v > hi ? hi : v;
}
// Lane by lane: op on the lanes (signed or unsigned as S says), the low W bits of each result.
template <int W, bool S, class Op> inline unsigned int simd(unsigned int a, unsigned int b, Op op) {
    unsigned int r = 0;
    for (int i = 0; i < 32 / W; ++i)
        r |= ((unsigned int)op(lane<W, S>(a, i), lane<W, S>(b, i)) & ((1u << W) - 1)) << (W * i);
    return r;
}
template <int W, bool S> inline unsigned int sad(unsigned int a, unsigned int b) {
    unsigned int s = 0;
    for (int i = 0; i < 32 / W; ++i) {
        long long d = lane<W, S>(a, i) - lane<W, S>(b, i);
        s += (unsigned int)(d < 0 ? -d : d);
    }
    return s;
}
}  // namespace intr
}  // namespace kc
// NAME2 and NAME4: EXPR of each pair of 16-bit or 8-bit lanes x and y (w: the lane width).
#define KC_SIMD_WIDTH(NAME, W, S, EXPR)                                                              \
    inline unsigned int NAME(unsigned int a, unsigned int b) {                                        \
        return kc::intr::simd<W, S>(a, b, [](long long x, long long y) {                              \
            const int w = W;                                                                          \
            (void)y, (void)w;                                                                         \
            return (long long)(EXPR);                                                                 \
        });                                                                                           \
    }
#define KC_SIMD(NAME, S, EXPR) KC_SIMD_WIDTH(NAME##2, 16, S, EXPR) KC_SIMD_WIDTH(NAME##4, 8, S, EXPR)
#define KC_SAT(S, V) (w == 16 ? kc::intr::sat<16, S>(V) : kc::intr::sat<8, S>(V))
KC_SIMD(__vabsdiffs, true, x > y ? x - y : y - x)
KC_SIMD(__vabsdiffu, false, x > y ? x - y : y - x)
KC_SIMD(__vadd, false, x + y)
KC_SIMD(__vaddss, true, KC_SAT(true, x + y))
KC_SIMD(__vaddus, false, KC_SAT(false, x + y))
KC_SIMD(__vavgs, true, (x + y + (x + y >= 0)) >> 1)   // halves rounded away from zero
KC_SIMD(__vavgu, false, (x + y + 1) >> 1)
KC_SIMD(__vhaddu, false, (x + y) >> 1)
KC_SIMD(__vcmpeq, false, x == y ? -1 : 0)
KC_SIMD(__vcmpges, true, x >= y ? -1 : 0)
KC_SIMD(__vcmpgeu, false, x >= y ? -1 : 0)
KC_SIMD(__vcmpgts, true, x > y ? -1 : 0)
KC_SIMD(__vcmpgtu, false, x > y ? -1 : 0)
KC_SIMD(__vcmples, true, x <= y ? -1 : 0)
KC_SIMD(__vcmpleu, false, x <= y ? -1 : 0)
KC_SIMD(__vcmplts, true, x < y ? -1 : 0)
KC_SIMD(__vcmpltu, false, x < y ? -1 : 0)
KC_SIMD(__vcmpne, false, x != y ? -1 : 0)
KC_SIMD(__vmaxs, true, x > y ? x : y)
KC_SIMD(__vmaxu, false, x > y ? x : y)
KC_SIMD(__vmins, true, x < y ? x : y)
KC_SIMD(__vminu, false, x < y ? x : y)
KC_SIMD(__vseteq, false, x == y)
KC_SIMD(__vsetges, true, x >= y)
KC_SIMD(__vsetgeu, false, x >= y)
KC_SIMD(__vsetgts, true, x > y)
KC_SIMD(__vsetgtu, false, x > y)
KC_SIMD(__vsetles, true, x <= y)
KC_SIMD(__vsetleu, false, x <= y)
KC_SIMD(__vsetlts, true, x < y)
KC_SIMD(__vsetltu, false, x < y)
KC_SIMD(__vsetne, false, x != y)
KC_SIMD(__vsub, false, x - y)
KC_SIMD(__vsubss, true, KC_SAT(true, x - y))
KC_SIMD(__vsubus, false, KC_SAT(false, x - y))
#undef KC_SAT
#undef KC_SIMD
#undef KC_SIMD_WIDTH
inline unsigned int __vabs2(unsigned int a) { return __vabsdiffs2(a, 0); }
inline unsigned int __vabs4(unsigned int a) { return __vabsdiffs4(a, 0); }
inline unsigned int __vabsss2(unsigned int a) {
    return kc::intr::simd<16, true>(a, 0, [](long long x, long long) { return kc::intr::sat<16, true>(x < 0 ? -x : x); });
}
inline unsigned int __vabsss4(unsigned int a) {
    return kc::intr::simd<8, true>(a, 0, [](long long x, long long) { return kc::intr::sat<8, true>(x < 0 ? -x : x); });
}
inline unsigned int __vneg2(unsigned int a) { return __vsub2(0, a); }
inline unsigned int __vneg4(unsigned int a) { return __vsub4(0, a); }
inline unsigned int __vnegss2(unsigned int a) { return __vsubss2(0, a); }
inline unsigned int __vnegss4(unsigned int a) { return __vsubss4(0, a); }
inline unsigned int __vsads2(unsigned int a, unsigned int b) { return kc::intr::sad<16, true>(a, b); }
inline unsigned int __vsads4(unsigned int a, unsigned int b) { return kc::intr::sad<8, true>(a, b); }
inline unsigned int __vsadu2(unsigned int a, unsigned int b) { return kc::intr::sad<16, false>(a, b); }
inline unsigned int __vsadu4(unsigned int a, unsigned int b) { return kc::intr::sad<8, false>(a, b); }

// ---- the bits of one type as another --------------------------------------------------------
inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
inline unsigned int __float_as_uint(float x) { unsigned int r; memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)(unsigned int)__double_as_longlong(x); }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo));
}

// ---- conversions and arithmetic in each rounding mode -------------------------------------
// _rn rounds to nearest even, _rz toward zero, _ru up, _rd down. To integers as a GPU's cvt
// does: saturating, NaN to 0 or 0x80...0. Everything else is the IEEE operation run by the
// processor in that rounding mode (fesetround around it), so each result is the exactly
// rounded one; float operands and results subnormal under KC_FTZ become zero.
#define KC_CVT_INT(S, D)                                                                                            \
    inline int __float2int_##S(float x) {                                                                            \
        return kc::intr::to_int<int>(kc::intr::fz(x), D, -2147483648.0, 2147483648.0, INT_MIN, INT_MAX, 0); }       \
    inline unsigned int __float2uint_##S(float x) {                                                                  \
        return kc::intr::to_int<unsigned int>(kc::intr::fz(x), D, 0.0, 4294967296.0, 0u, UINT_MAX, 0u); }           \
    inline long long __float2ll_##S(float x) {                                                                       \
        return kc::intr::to_int<long long>(kc::intr::fz(x), D, -9223372036854775808.0, 9223372036854775808.0,       \
                                           LLONG_MIN, LLONG_MAX, LLONG_MIN); }                                         \
    inline unsigned long long __float2ull_##S(float x) {                                                             \
        return kc::intr::to_int<unsigned long long>(kc::intr::fz(x), D, 0.0, 18446744073709551616.0, 0ull, ULLONG_MAX, \
                                                    1ull << 63); }                                                     \
    inline int __double2int_##S(double x) {                                                                          \
        return kc::intr::to_int<int>(x, D, -2147483648.0, 2147483648.0, INT_MIN, INT_MAX, INT_MIN); }                 \
    inline unsigned int __double2uint_##S(double x) {                                                                \
        return kc::intr::to_int<unsigned int>(x, D, 0.0, 4294967296.0, 0u, UINT_MAX, 0x80000000u); }                \
    inline long long __double2ll_##S(double x) {                                                                     \
        return kc::intr::to_int<long long>(x, D, -9223372036854775808.0, 9223372036854775808.0, LLONG_MIN, LLONG_MAX, \
                                           LLONG_MIN); }                                                               \
    inline unsigned long long __double2ull_##S(double x) {                                                           \
        return kc::intr::to_int<unsigned long long>(x, D, 0.0, 18446744073709551616.0, 0ull, ULLONG_MAX, 1ull << 63); }
KC_CVT_INT(rn, kc::intr::RN)
KC_CVT_INT(rz, kc::intr::RZ)
KC_CVT_INT(ru, kc::intr::RU)
KC_CVT_INT(rd, kc::intr::RD)
#undef KC_CVT_INT

// Float results (and operands) under KC_FTZ: see fop.
#define KC_FOP(M, ...) kc::intr::fop(M, [&](auto t) { using T = decltype(t); __VA_ARGS__; })
#define KC_X volatile T x = (T)kc::intr::fz(a)
#define KC_XY volatile T x = (T)kc::intr::fz(a), y = (T)kc::intr::fz(b)
#define KC_FLOAT_OPS(S, M)                                                                                          \
    inline float __fadd_##S(float a, float b) { return KC_FOP(M, KC_XY; return (T)(x + y)); }                       \
    inline float __fsub_##S(float a, float b) { return KC_FOP(M, KC_XY; return (T)(x - y)); }                       \
    inline float __fmul_##S(float a, float b) { return KC_FOP(M, KC_XY; return (T)(x * y)); }                       \
    inline float __fdiv_##S(float a, float b) { return KC_FOP(M, KC_XY; return (T)(x / y)); }                       \
    inline float __frcp_##S(float a) { return KC_FOP(M, KC_X; return (T)(1 / x)); }                                 \
    inline float __fsqrt_##S(float a) { return KC_FOP(M, KC_X; return (T)sqrt((T)x)); }                              \
    inline float __fmaf_##S(float a, float b, float c) {                                                             \
        return KC_FOP(M, KC_XY, z = (T)kc::intr::fz(c); return (T)fma((T)x, (T)y, (T)z));                            \
    }                                                                                                                \
    inline float __double2float_##S(double a) { return KC_FOP(M, volatile double x = a; return (T)x); }
KC_FLOAT_OPS(rn, FE_TONEAREST)
KC_FLOAT_OPS(rz, FE_TOWARDZERO)
KC_FLOAT_OPS(ru, FE_UPWARD)
KC_FLOAT_OPS(rd, FE_DOWNWARD)
#undef KC_FLOAT_OPS
#undef KC_XY
#undef KC_X
#undef KC_FOP
// The _ieee forms of the float FMA never flush subnormals, -ftz=true or not.
inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }

#define KC_R1(T, X, M) kc::intr::rounded<T>(M, [&] { volatile X v = x; return (T)v; })
#define KC_D2(OP, M) kc::intr::rounded<double>(M, [&] { volatile double x = a, y = b; return OP; })
#define KC_DIRECTED(S, M)                                                                                           \
    inline float __int2float_##S(int x) { return KC_R1(float, int, M); }                                            \
    inline float __uint2float_##S(unsigned int x) { return KC_R1(float, unsigned int, M); }                         \
    inline float __ll2float_##S(long long x) { return KC_R1(float, long long, M); }                                 \
    inline float __ull2float_##S(unsigned long long x) { return KC_R1(float, unsigned long long, M); }               \
    inline double __ll2double_##S(long long x) { return KC_R1(double, long long, M); }                              \
    inline double __ull2double_##S(unsigned long long x) { return KC_R1(double, unsigned long long, M); }           \
    inline float __fmaf_ieee_##S(float a, float b, float c) {                                                        \
        return kc::intr::rounded<float>(M, [&] { volatile float x = a, y = b, z = c; return fmaf(x, y, z); }); }    \
    inline double __dadd_##S(double a, double b) { return KC_D2(x + y, M); }                                         \
    inline double __dsub_##S(double a, double b) { return KC_D2(x - y, M); }                                         \
    inline double __dmul_##S(double a, double b) { return KC_D2(x * y, M); }                                         \
    inline double __ddiv_##S(double a, double b) { return KC_D2(x / y, M); }                                         \
    inline double __drcp_##S(double a) { const double b = 1.0; return KC_D2(y / x, M); }                             \
    inline double __dsqrt_##S(double a) {                                                                            \
        return kc::intr::rounded<double>(M, [&] { volatile double x = a; return __builtin_sqrt(x); }); }             \
    inline double __fma_##S(double a, double b, double c) {                                                          \
        return kc::intr::rounded<double>(M, [&] { volatile double x = a, y = b, z = c; return fma(x, y, z); }); }
KC_DIRECTED(rz, FE_TOWARDZERO)
KC_DIRECTED(ru, FE_UPWARD)
KC_DIRECTED(rd, FE_DOWNWARD)
#undef KC_DIRECTED
#undef KC_D2
#undef KC_R1
// Round to nearest even: the processor's own mode, kept from fusing with its neighbours.
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned int x) { return (float)x; }
inline float __ll2float_rn(long long x) { return (float)x; }
inline float __ull2float_rn(unsigned long long x) { return (float)x; }
inline double __ll2double_rn(long long x) { return (double)x; }
inline double __ull2double_rn(unsigned long long x) { return (double)x; }
inline double __int2double_rn(int x) { return (double)x; }            // exact
inline double __uint2double_rn(unsigned int x) { return (double)x; }  // exact
inline double __dadd_rn(double a, double b) { using kc::intr::opaque; return opaque(opaque(a) + opaque(b)); }
inline double __dsub_rn(double a, double b) { using kc::intr::opaque; return opaque(opaque(a) - opaque(b)); }
inline double __dmul_rn(double a, double b) { using kc::intr::opaque; return opaque(opaque(a) * opaque(b)); }
inline double __ddiv_rn(double a, double b) { using kc::intr::opaque; return opaque(opaque(a) / opaque(b)); }
inline double __drcp_rn(double a) { using kc::intr::opaque; return opaque(1.0 / opaque(a)); }
inline double __dsqrt_rn(double a) { return __builtin_sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// 1/sqrt(x) rounded to nearest: through double it is exactly rounded for every float (checked
// exhaustively: a double quotient of a double square root is never near enough a midpoint).
inline float __frsqrt_rn(float x) { using kc::intr::fz; return fz((float)(1.0 / __builtin_sqrt((double)fz(x)))); }

// ---- fast-math intrinsics -------------------------------------------------------------------
// A GPU computes these with approximate instructions (ex2.approx, lg2.approx, sin.approx,
// ...), within the bounds of the Programming Guide's "Intrinsic Functions" table. __sinf,
// __cosf, __sincosf, __logf, __log2f, __log10f, __powf (ex2.approx of y times lg2.approx) and
// __tanf (div.approx of sin.approx by cos.approx) are the GPU's, bit for bit (kc_gpu_math.h),
// and so is __expf under KC_FTZ, where device code's calls of it go to kc::gpu_fast_expf. The
// others here (__expf and __exp10f called otherwise, __tanhf) are the C library's accurate values
// (so they differ from a GPU's in the last bits, within the table's bounds); what is the GPU's:
// under KC_FTZ subnormal arguments and results are zero of the same sign (not in __tanhf).
inline float __expf(float x) { using kc::intr::fz; return fz(expf(fz(x))); }
inline float __exp10f(float x) { using kc::intr::fz; return fz(exp10f(fz(x))); }
// The GPU's lg2.approx and the multiplies around it (kc_gpu_math.h, included after this).
namespace kc { inline float gpu_fast_logf(float x); inline float gpu_fast_log2f(float x);
               inline float gpu_fast_log10f(float x); }
inline float __logf(float x) { return kc::gpu_fast_logf(x); }
inline float __log2f(float x) { return kc::gpu_fast_log2f(x); }
inline float __log10f(float x) { return kc::gpu_fast_log10f(x); }
inline float __tanhf(float x) { return tanhf(x); }   // a GPU's tanh.approx keeps subnormals
// The GPU's sin.approx, cos.approx, div.approx, lg2.approx and ex2.approx (kc_gpu_math.h, included after this).
namespace kc { inline float gpu_fast_tanf(float x); inline float gpu_fast_powf(float x, float y); }
inline float __tanf(float x) { return kc::gpu_fast_tanf(x); }
inline float __powf(float x, float y) { return kc::gpu_fast_powf(x, y); }
// The GPU's div.approx: x times its measured reciprocal (kc_gpu_math.h, included after this).
namespace kc { inline float gpu_fdividef(float x, float y); }
inline float __fdividef(float x, float y) { return kc::gpu_fdividef(x, y); }
inline float fdividef(float x, float y) { return __fdiv_rn(x, y); }   // CUDA's fdividef is the IEEE quotient
// Clamped to [+0, 1]; NaN gives +0.
inline float __saturatef(float x) { x = kc::intr::fz(x); return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

// ---- CUDA math functions the C library lacks ------------------------------------------------
// Computed in long double (64-bit significand) and rounded once: within 1 ulp in float and
// double (0.5 ulp but for rare cases), where CUDA's own bounds are 1 to 8 ulp; the float ones
// follow KC_FTZ.
namespace kc {
namespace intr {
inline long double sinpi_ld(double x) {
    if (!__builtin_isfinite(x)) return (long double)x - x;   // NaN
    double r = fmod(x, 2.0);                                   // exact, |r| < 2, sign of x
    if (r == floor(r)) return copysign(0.0, x);                // integers: +0 or -0 like x
    if (r > 1.0) r -= 2.0; else if (r < -1.0) r += 2.0;       // exact: now |r| < 1
    if (r > 0.5) r = 1.0 - r; else if (r < -0.5) r = -1.0 - r; // exact: now |r| <= 1/2
    return sinl(kPi * r);
}
inline long double cospi_ld(double x) {
    if (!__builtin_isfinite(x)) return (long double)x - x;
    double r = fmod(fabs(x), 2.0);
    if (r > 1.0) r = 2.0 - r;                                  // exact: now 0 <= r <= 1
    if (r < 0.25) return cosl(kPi * r);
    return sinl(kPi * (0.5L - r));                             // exact difference; +0 at r = 1/2
}
// erfinv(a) for 0 <= a <= 1/2: Newton's method on erf, from a start below the root (erf is
// concave there, so the iterates rise to it).
inline long double erfinv_small(long double a) {
    long double x = a / kTwoOverSqrtPi;
    if (a == 0) return a;
    for (int i = 0; i < 50; ++i) {
        long double dx = (erfl(x) - a) / (kTwoOverSqrtPi * expl(-x * x));
        x -= dx;
        if (fabsl(dx) <= fabsl(x) * 1e-19L) break;
    }
    return x;
}
// erfcinv(z) for 0 < z < 1/2: Newton's method on log(erfc(x)) - log(z), concave and
// decreasing, from the asymptotic estimate; in long double erfc(x) holds all of double's range.
inline long double erfcinv_tail(long double z) {
    long double lz = logl(z), t = sqrtl(-lz);
    long double x = t - (logl(t) + kLnSqrtPi) / (2 * t);
    if (!(x > 0.4L)) x = 0.5L;
    for (int i = 0; i < 100; ++i) {
        long double e = erfcl(x);
        long double dx = (logl(e) - lz) / (-kTwoOverSqrtPi * expl(-x * x) / e);
        x -= dx;
        if (fabsl(dx) <= x * 1e-19L) break;
    }
    return x;
}
inline long double erfcinv_ld(double z) {   // 0 < z < 2
    if (z > 1.0) return -erfcinv_ld(2.0 - z); // exact
    if (z >= 0.5) return erfinv_small(1.0 - z);
    return erfcinv_tail(z);
}
inline long double erfcinv_full(double z) {
    if (z != z) return z;
    if (z == 0.0) return HUGE_VALL;
    if (z == 2.0) return -HUGE_VALL;
    if (z < 0.0 || z > 2.0) return NAN;
    return erfcinv_ld(z);
}
inline long double erfinv_full(double y) {
    if (y != y) return y;
    double a = fabs(y);
    if (a > 1.0) return NAN;
    if (a == 1.0) return copysign(INFINITY, y);
    long double r = a <= 0.5 ? erfinv_small(a) : erfcinv_ld(1.0 - a);   // 1 - a exact
    return y < 0 || (y == 0 && __builtin_signbit(y)) ? -r : r;
}
inline long double normcdfinv_full(double p) {
    if (p != p) return p;
    if (p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return -HUGE_VALL;
    if (p == 1.0) return HUGE_VALL;
    long double r = erfcinv_ld(2.0 * p);   // 2p exact
    return r == 0 ? 0.0L : -kSqrt2 * r;
}
inline long double normcdf_ld(double x) { return 0.5L * erfcl(-(long double)x / kSqrt2); }
// exp(x^2), with x^2 split exactly into a double and its rounding error.
inline long double exp_sq(double x) {
    double hi = x * x;
    if (!(hi < 11356.0)) return HUGE_VALL;   // past long double's range
    double lo = fma(x, x, -hi);
    return expl((long double)hi) * expl((long double)lo);
}
inline long double erfcx_ld(double x) {
    if (x != x) return x;
    if (x < 0) return 2 * exp_sq(x) - erfcx_ld(-x);   // no cancellation: 2e^(x^2) >= 2 > erfcx(-x)
    if (x < 50.0) return exp_sq(x) * erfcl(x);
    // Asymptotic series, whose terms fall fast here: 1/(x sqrt(pi)) sum (-1)^n (2n-1)!! / (2x^2)^n.
    long double q = 1.0L / (2.0L * x * x), term = 1, sum = 1;
    for (int n = 1; n < 12; ++n) sum += (term *= -(2 * n - 1) * q);
    return sum / ((long double)x * kSqrtPi);
}
// I0 and I1 by their power series (all terms positive: no cancellation).
inline long double bessel_i(double x, int order) {
    if (x != x) return x;
    long double ax = fabsl(x), r;
    if (ax > 720.0L) {
        r = HUGE_VALL;   // past double's range (I0(713.99) is DBL_MAX)
    } else {
        long double q = ax * ax / 4, term = order ? ax / 2 : 1.0L;
        r = term;
        for (int k = 1; k < 3000 && term > r * 1e-21L; ++k) r += (term *= q / ((long double)k * (k + order)));
    }
    return order && __builtin_signbit(x) ? -r : r;
}
inline long double sumsq(const double* v, int n) {
    long double s = 0;
    for (int i = 0; i < n; ++i) s += (long double)v[i] * v[i];
    return s;
}
// A vector norm: +inf if any element is infinite (a NaN besides included), else NaN if any is.
inline long double vnorm(const double* v, int n) {
    for (int i = 0; i < n; ++i) if (__builtin_isinf(v[i])) return HUGE_VALL;
    return sqrtl(sumsq(v, n));
}
inline long double rvnorm(const double* v, int n) {
    for (int i = 0; i < n; ++i) if (__builtin_isinf(v[i])) return 0.0L;
    return 1.0L / sqrtl(sumsq(v, n));
}
}  // namespace intr
}  // namespace kc

// 1/sqrt(x), 1/cbrt(x): 0 gives inf of its sign, inf gives +0 (cbrt: 0 of its sign).
#ifndef KC_LIBC_HAS_RSQRT
inline float rsqrtf(float x) { using kc::intr::fz; return fz((float)(1.0L / sqrtl(fz(x)))); }
inline double rsqrt(double x) { return (double)(1.0L / sqrtl(x)); }
#endif
inline float rsqrt(float x) { return rsqrtf(x); }
inline float rcbrtf(float x) { using kc::intr::fz; return fz((float)(1.0L / cbrtl(fz(x)))); }
inline double rcbrt(double x) { return (double)(1.0L / cbrtl(x)); }
inline float rcbrt(float x) { return rcbrtf(x); }
// sin(pi x), cos(pi x): exact for integers and half-integers (sinpi(n) is 0 of n's sign,
// cospi(n + 1/2) is +0), NaN for infinities.
#ifndef KC_LIBC_HAS_SINPI
inline float sinpif(float x) { using kc::intr::fz; return kc::intr::fzl(kc::intr::sinpi_ld(fz(x))); }
inline double sinpi(double x) { return (double)kc::intr::sinpi_ld(x); }
inline float cospif(float x) { using kc::intr::fz; return kc::intr::fzl(kc::intr::cospi_ld(fz(x))); }
inline double cospi(double x) { return (double)kc::intr::cospi_ld(x); }
#endif
inline float sinpi(float x) { return sinpif(x); }
inline float cospi(float x) { return cospif(x); }
inline void sincospif(float x, float* s, float* c) {
    using kc::intr::fz;
    *s = kc::intr::fzl(kc::intr::sinpi_ld(fz(x)));
    *c = kc::intr::fzl(kc::intr::cospi_ld(fz(x)));
}
inline void sincospi(double x, double* s, double* c) { *s = (double)kc::intr::sinpi_ld(x); *c = (double)kc::intr::cospi_ld(x); }
inline void sincospi(float x, float* s, float* c) { sincospif(x, s, c); }
inline void sincos(float x, float* s, float* c) { sincosf(x, s, c); }
inline float exp10(float x) { return exp10f(x); }
// NAMEf(float), NAME(double) and NAME(float) of a function computed in long double by
// IMPL (one argument; under KC_FTZ the float forms flush subnormal arguments and results).
#define KC_LD_FUNCTION(NAME, IMPL)                                                                   \
    inline float NAME##f(float x) { using kc::intr::fz; return kc::intr::fzl(IMPL(fz(x))); }       \
    inline double NAME(double x) { return (double)IMPL(x); }                                         \
    inline float NAME(float x) { return NAME##f(x); }
// The inverse error functions: erfinv(+-1) and erfcinv(0), erfcinv(2) are infinities, NaN
// outside [-1, 1] and [0, 2]; normcdfinv(p) = -sqrt(2) erfcinv(2p).
KC_LD_FUNCTION(erfinv, kc::intr::erfinv_full)
KC_LD_FUNCTION(erfcinv, kc::intr::erfcinv_full)
KC_LD_FUNCTION(normcdfinv, kc::intr::normcdfinv_full)
// The standard normal distribution function, and the scaled complementary error function
// erfcx(x) = exp(x^2) erfc(x).
KC_LD_FUNCTION(normcdf, kc::intr::normcdf_ld)
KC_LD_FUNCTION(erfcx, kc::intr::erfcx_ld)
// Modified Bessel functions of the first kind, orders 0 and 1.
namespace kc {
namespace intr {
inline long double bessel_i0(double x) { return bessel_i(x, 0); }
inline long double bessel_i1(double x) { return bessel_i(x, 1); }
}  // namespace intr
}  // namespace kc
KC_LD_FUNCTION(cyl_bessel_i0, kc::intr::bessel_i0)
KC_LD_FUNCTION(cyl_bessel_i1, kc::intr::bessel_i1)
#undef KC_LD_FUNCTION
// Float overloads of the C library's Bessel functions, as CUDA's headers declare them.
#if defined(__USE_MISC) || defined(__USE_XOPEN)
inline float j0(float x) { return j0f(x); }
inline float j1(float x) { return j1f(x); }
inline float jn(int n, float x) { return jnf(n, x); }
inline float y0(float x) { return y0f(x); }
inline float y1(float x) { return y1f(x); }
inline float yn(int n, float x) { return ynf(n, x); }
#endif
// Euclidean norms and their reciprocals, without overflow or underflow in between.
inline double rhypot(double x, double y) { const double v[2] = {x, y}; return (double)kc::intr::rvnorm(v, 2); }
inline float rhypotf(float x, float y) {
    using kc::intr::fz;
    const double v[2] = {fz(x), fz(y)};
    return kc::intr::fzl(kc::intr::rvnorm(v, 2));
}
inline double norm3d(double a, double b, double c) { const double v[3] = {a, b, c}; return (double)kc::intr::vnorm(v, 3); }
inline double rnorm3d(double a, double b, double c) { const double v[3] = {a, b, c}; return (double)kc::intr::rvnorm(v, 3); }
inline double norm4d(double a, double b, double c, double d) { const double v[4] = {a, b, c, d}; return (double)kc::intr::vnorm(v, 4); }
inline double rnorm4d(double a, double b, double c, double d) { const double v[4] = {a, b, c, d}; return (double)kc::intr::rvnorm(v, 4); }
inline float norm3df(float a, float b, float c) {
    using kc::intr::fz;
    const double v[3] = {fz(a), fz(b), fz(c)};
    return kc::intr::fzl(kc::intr::vnorm(v, 3));
}
inline float rnorm3df(float a, float b, float c) {
    using kc::intr::fz;
    const double v[3] = {fz(a), fz(b), fz(c)};
    return kc::intr::fzl(kc::intr::rvnorm(v, 3));
}
inline float norm4df(float a, float b, float c, float d) {
    using kc::intr::fz;
    const double v[4] = {fz(a), fz(b), fz(c), fz(d)};
    return kc::intr::fzl(kc::intr::vnorm(v, 4));
}
inline float rnorm4df(float a, float b, float c, float d) {
    using kc::intr::fz;
    const double v[4] = {fz(a), fz(b), fz(c), fz(d)};
    return kc::intr::fzl(kc::intr::rvnorm(v, 4));
}
inline double norm(int dim, const double* p) {
    long double s = 0;
    bool inf = false;
    for (int i = 0; i < dim; ++i) { inf = inf || __builtin_isinf(p[i]); s += (long double)p[i] * p[i]; }
    return inf ? INFINITY : (double)sqrtl(s);
}
inline double rnorm(int dim, const double* p) {
    long double s = 0;
    bool inf = false;
    for (int i = 0; i < dim; ++i) { inf = inf || __builtin_isinf(p[i]); s += (long double)p[i] * p[i]; }
    return inf ? 0.0 : (double)(1.0L / sqrtl(s));
}
namespace kc {
namespace intr {
// The sum of squares of dim floats (flushed under KC_FTZ), in long double; inf: any is infinite.
inline long double sumsq_f(int dim, const float* p, bool& inf) {
    long double s = 0;
    inf = false;
    for (int i = 0; i < dim; ++i) {
        float v = fz(p[i]);
        inf = inf || __builtin_isinf(v);
        s += (long double)v * v;
    }
    return s;
}
}  // namespace intr
}  // namespace kc
inline float normf(int dim, const float* p) {
    bool inf;
    long double s = kc::intr::sumsq_f(dim, p, inf);
    return inf ? INFINITY : kc::intr::fzl(sqrtl(s));
}
inline float rnormf(int dim, const float* p) {
    bool inf;
    long double s = kc::intr::sumsq_f(dim, p, inf);
    return inf ? 0.0f : kc::intr::fzl(1.0L / sqrtl(s));
}

// ---- time -----------------------------------------------------------------------------------
// A GPU's cycle counter, here nanoseconds of the monotonic clock (an SM's clock runs at 1 to 2
// GHz, so the counts are of the same order). clock64() is long long; clock() is the same
// counter as clock_t (on an H100 too it is the full 64-bit count, not 32 bits). clock() is a
// function-like macro, because C's clock() (the process's CPU time, in microseconds) has the
// same signature and would otherwise be called: <time.h> is included above, so the macro never
// reaches its declaration, and `std::clock()` written after this header would not compile.
// Define KC_NO_CLOCK_MACRO to keep C's clock().
inline long long clock64() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
inline clock_t __kc_device_clock() { return (clock_t)clock64(); }
#ifndef KC_NO_CLOCK_MACRO
#define clock() __kc_device_clock()
#endif
// A GPU suspends the thread for about ns nanoseconds (anywhere from 0 to twice that, at most
// 1 ms; an H100 returned after about 460 cycles for any ns up to 10^6): 0 is a valid duration,
// and a fiber that slept would hold up its whole block here.
inline void __nanosleep(unsigned int ns) { (void)ns; }
inline void __prof_trigger(int counter) { (void)counter; }   // profiler counters: none here

// ---- loads and stores with cache hints: plain accesses on a CPU -------------------------------
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, typename kc::intr::ident<T>::type v) { *p = v; }
template <class T> inline void __stcg(T* p, typename kc::intr::ident<T>::type v) { *p = v; }
template <class T> inline void __stcs(T* p, typename kc::intr::ident<T>::type v) { *p = v; }
template <class T> inline void __stwt(T* p, typename kc::intr::ident<T>::type v) { *p = v; }
