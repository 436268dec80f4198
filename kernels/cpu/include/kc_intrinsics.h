// CUDA's device intrinsics and the math functions the C library lacks, as a GPU computes
// them (CUDA C++ Programming Guide, "Mathematical Functions" and "Intrinsic Functions";
// PTX ISA for the conversions). Only C headers: libclang parses this for every cold compile.
#pragma once
#include <fenv.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

// ---- min and max, with CUDA's overloads (min(int, unsigned) is unsigned) ------------------
#define KC_MINMAX(A, B, R)                                                              \
    inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }                       \
    inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
KC_MINMAX(int, int, int)
KC_MINMAX(unsigned int, unsigned int, unsigned int)
KC_MINMAX(int, unsigned int, unsigned int)
KC_MINMAX(unsigned int, int, unsigned int)
KC_MINMAX(long, long, long)
KC_MINMAX(unsigned long, unsigned long, unsigned long)
KC_MINMAX(long long, long long, long long)
KC_MINMAX(unsigned long long, unsigned long long, unsigned long long)
KC_MINMAX(float, float, float)
KC_MINMAX(double, double, double)
KC_MINMAX(float, double, double)
KC_MINMAX(double, float, double)
#undef KC_MINMAX
inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---- integer intrinsics --------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
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
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
// Byte s of the eight bytes {y, x} (x the low four), per selector nibble.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
// 24-bit multiplies: the low 24 bits of each operand (signed for __mul24).
inline int __mul24(int x, int y) {
    int a = (int)((unsigned)x << 8) >> 8, b = (int)((unsigned)y << 8) >> 8;
    return (int)((long long)a * b);
}
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) { return (unsigned)(((unsigned long long)x * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z) { return z + (unsigned)(x > y ? (long long)x - y : (long long)y - x); }
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned)(((unsigned long long)x + y) >> 1); }
inline unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned)(((unsigned long long)x + y + 1) >> 1); }
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s & 31)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s & 31));
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s > 32 ? 32 : s));
}
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i) c += (int)(signed char)(a >> 8 * i) * (int)(signed char)(b >> 8 * i);
    return c;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i) c += ((a >> 8 * i) & 0xff) * ((b >> 8 * i) & 0xff);
    return c;
}

// ---- the bits of one type as another ------------------------------------------------------
inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
inline unsigned int __float_as_uint(float x) { unsigned r; memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}

// ---- rounding modes -------------------------------------------------------------------------
// The operation runs under the C library's rounding mode: its operands are volatile (read
// after the mode is set) and its result is pinned in memory before the mode is restored,
// so that the compiler neither folds it nor moves it across the mode changes.
namespace kc {
template <class F>
inline auto rounded(int mode, F f) -> decltype(f()) {
    int old = fegetround();
    fesetround(mode);
    auto r = f();
    asm volatile("" : "+m"(r) : : "memory");   // r is computed before the mode changes back
    fesetround(old);
    return r;
}
// Float to integer as PTX's cvt.rni/rzi/rpi/rmi with saturation: NaN gives 0, and values
// past the type's range its nearest end.
template <class I>
inline I to_int(double x, int mode, double lo, double hi) {
    if (x != x) return 0;
    double r = mode == FE_TOWARDZERO ? trunc(x) : mode == FE_UPWARD ? ceil(x) : mode == FE_DOWNWARD ? floor(x)
             : rounded(FE_TONEAREST, [&] { volatile double v = x; return nearbyint(v); });   // ties to even
    return r <= lo ? (I)lo : r >= hi ? (I)hi : (I)r;
}
}  // namespace kc

#define KC_ROUNDINGS(F) F(rn, FE_TONEAREST) F(rz, FE_TOWARDZERO) F(ru, FE_UPWARD) F(rd, FE_DOWNWARD)
#define KC_F2I(S, M)                                                                                            \
    inline int __float2int_##S(float x) { return kc::to_int<int>(x, M, INT_MIN, INT_MAX); }                      \
    inline unsigned int __float2uint_##S(float x) { return kc::to_int<unsigned>(x, M, 0, UINT_MAX); }            \
    inline long long __float2ll_##S(float x) { return kc::to_int<long long>(x, M, -9223372036854775808.0, 9223372036854775807.0); } \
    inline unsigned long long __float2ull_##S(float x) { return kc::to_int<unsigned long long>(x, M, 0, 18446744073709551615.0); } \
    inline int __double2int_##S(double x) { return kc::to_int<int>(x, M, INT_MIN, INT_MAX); }                   \
    inline unsigned int __double2uint_##S(double x) { return kc::to_int<unsigned>(x, M, 0, UINT_MAX); }         \
    inline long long __double2ll_##S(double x) { return kc::to_int<long long>(x, M, -9223372036854775808.0, 9223372036854775807.0); } \
    inline unsigned long long __double2ull_##S(double x) { return kc::to_int<unsigned long long>(x, M, 0, 18446744073709551615.0); } \
    inline float __int2float_##S(int x) { return kc::rounded(M, [&] { volatile int v = x; return (float)v; }); }        \
    inline float __uint2float_##S(unsigned int x) { return kc::rounded(M, [&] { volatile unsigned v = x; return (float)v; }); } \
    inline float __ll2float_##S(long long x) { return kc::rounded(M, [&] { volatile long long v = x; return (float)v; }); } \
    inline float __ull2float_##S(unsigned long long x) { return kc::rounded(M, [&] { volatile unsigned long long v = x; return (float)v; }); } \
    inline double __ll2double_##S(long long x) { return kc::rounded(M, [&] { volatile long long v = x; return (double)v; }); } \
    inline double __ull2double_##S(unsigned long long x) { return kc::rounded(M, [&] { volatile unsigned long long v = x; return (double)v; }); } \
    inline float __double2float_##S(double x) { return kc::rounded(M, [&] { volatile double v = x; return (float)v; }); } \
    inline float __fadd_##S(float a, float b) { return kc::rounded(M, [&] { volatile float x = a, y = b; return x + y; }); } \
    inline float __fsub_##S(float a, float b) { return kc::rounded(M, [&] { volatile float x = a, y = b; return x - y; }); } \
    inline float __fmul_##S(float a, float b) { return kc::rounded(M, [&] { volatile float x = a, y = b; return x * y; }); } \
    inline float __fdiv_##S(float a, float b) { return kc::rounded(M, [&] { volatile float x = a, y = b; return x / y; }); } \
    inline float __frcp_##S(float a) { return kc::rounded(M, [&] { volatile float x = a; return 1.0f / x; }); }          \
    inline float __fsqrt_##S(float a) { return kc::rounded(M, [&] { volatile float x = a; return sqrtf(x); }); }         \
    inline float __fmaf_##S(float a, float b, float c) { return kc::rounded(M, [&] { volatile float x = a, y = b, z = c; return fmaf(x, y, z); }); } \
    inline double __dadd_##S(double a, double b) { return kc::rounded(M, [&] { volatile double x = a, y = b; return x + y; }); } \
    inline double __dsub_##S(double a, double b) { return kc::rounded(M, [&] { volatile double x = a, y = b; return x - y; }); } \
    inline double __dmul_##S(double a, double b) { return kc::rounded(M, [&] { volatile double x = a, y = b; return x * y; }); } \
    inline double __ddiv_##S(double a, double b) { return kc::rounded(M, [&] { volatile double x = a, y = b; return x / y; }); } \
    inline double __drcp_##S(double a) { return kc::rounded(M, [&] { volatile double x = a; return 1.0 / x; }); }        \
    inline double __dsqrt_##S(double a) { return kc::rounded(M, [&] { volatile double x = a; return sqrt(x); }); }      \
    inline double __fma_##S(double a, double b, double c) { return kc::rounded(M, [&] { volatile double x = a, y = b, z = c; return fma(x, y, z); }); }
KC_ROUNDINGS(KC_F2I)
#undef KC_F2I
#undef KC_ROUNDINGS
inline double __int2double_rn(int x) { return (double)x; }
inline double __uint2double_rn(unsigned int x) { return (double)x; }
inline float __frsqrt_rn(float x) { return (float)(1.0 / sqrt((double)x)); }

// ---- fast-math intrinsics: a GPU's approximations; here the accurate functions ----------
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __saturatef(float x) { return x != x ? 0.f : x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float saturate(float x) { return __saturatef(x); }

// ---- CUDA math functions glibc lacks or names differently ----------------------------------
inline float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return (float)(1.0 / cbrt((double)x)); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return (float)sin(M_PI * (double)x); }
inline float cospif(float x) { return (float)cos(M_PI * (double)x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return (float)(0.5 * erfc(-(double)x * M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline double erfcinv(double y) {
    // Newton's method on erfc(x) = y from a bracketed start; erfc is monotonic.
    if (y <= 0.0) return INFINITY;
    if (y >= 2.0) return -INFINITY;
    double x = 0.0;
    for (int i = 0; i < 100; ++i) {
        double f = erfc(x) - y, d = -2.0 / sqrt(M_PI) * exp(-x * x);
        double nx = x - f / d;
        if (nx == x) break;
        x = nx;
    }
    return x;
}
inline float erfcinvf(float y) { return (float)erfcinv((double)y); }
inline double erfinv(double y) { return erfcinv(1.0 - y); }
inline float erfinvf(float y) { return (float)erfinv((double)y); }
inline double normcdfinv(double y) { return -M_SQRT2 * erfcinv(2.0 * y); }
inline float normcdfinvf(float y) { return (float)normcdfinv((double)y); }
inline double erfcx(double x) { return x < 25.0 ? exp(x * x) * erfc(x) : 1.0 / (x * sqrt(M_PI)) * (1.0 - 0.5 / (x * x)); }
inline float erfcxf(float x) { return (float)erfcx((double)x); }
inline float rhypotf(float x, float y) { return (float)(1.0 / hypot((double)x, (double)y)); }
inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
inline float norm3df(float a, float b, float c) { return (float)sqrt((double)a * a + (double)b * b + (double)c * c); }
inline float rnorm3df(float a, float b, float c) { return (float)(1.0 / sqrt((double)a * a + (double)b * b + (double)c * c)); }
inline float norm4df(float a, float b, float c, float d) {
    return (float)sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d);
}
inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
inline float normf(int n, const float* a) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += (double)a[i] * a[i];
    return (float)sqrt(s);
}
inline double norm(int n, const double* a) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * a[i];
    return sqrt(s);
}
inline float rnormf(int n, const float* a) { return 1.0f / normf(n, a); }

// ---- time: a GPU's cycle counters as nanoseconds of a monotonic clock -----------------------
inline long long clock64() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
inline void __nanosleep(unsigned int) {}   // a hint on a GPU too: fibers run until they block
inline void __prof_trigger(int) {}

// ---- loads and stores with cache hints: plain accesses here ----------------------------------
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
