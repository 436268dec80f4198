// The 16-bit floating-point types of cuda_fp16.h (__half: 5 exponent bits, 10 fraction
// bits) and cuda_bf16.h (__nv_bfloat16: 8 and 7), computed bit for bit as a GPU computes
// them. Both are one pattern, written once here: the rounding, and the class and operators
// CUDA's headers declare (KC_LOWP_TYPE), so that __half and __nv_bfloat16 convert and
// overload exactly as in CUDA 13's headers (which is also where their ambiguities come
// from: `h * 2.0f` does not compile there, so it does not here).
//
// Rounding. Every conversion to a 16-bit type rounds the exact value once, to nearest with
// ties to even, with overflow to infinity and every NaN to the canonical 0x7fff, as cvt.rn
// does (and CUDA's host code). Arithmetic computes in double and rounds that: a double sum,
// difference, product, quotient or square root of two p-bit operands rounded again to p bits
// is the correctly rounded result when 53 >= 2p + 2 (Figueroa, "When is double rounding
// innocuous?", 1995), which holds for p = 11 and p = 8. A fused multiply-add is not covered
// by that theorem, so it is computed in double rounded to odd, which makes the second
// rounding exact (Boldo and Melquiond, 2008).
//
// Only C headers, as in cuda_cpu.h.
#pragma once
#include <fenv.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

namespace kc {
namespace lowp {

// A binary floating-point format of 1 sign bit, E exponent bits and M fraction bits.
template <int E, int M>
struct Format {
    static constexpr int bias = (1 << (E - 1)) - 1;
    static constexpr int emin = 1 - bias;                         // exponent of the least normal
    static constexpr uint16_t sign = uint16_t(1u << (E + M));
    static constexpr uint16_t inf = uint16_t(((1u << E) - 1) << M);
    static constexpr uint16_t nan = 0x7fff;                        // the canonical NaN

    // The value (-1)^neg * m * 2^exp2, rounded to nearest even.
    static uint16_t round(bool neg, uint64_t m, int exp2) {
        uint16_t s = neg ? sign : 0;
        if (m == 0) return s;
        int e = 63 - __builtin_clzll(m) + exp2;                   // exponent of the leading bit
        int keep = (e > emin ? e : emin) - M;                     // exponent of the last bit kept
        int shift = keep - exp2;
        uint64_t n;
        if (shift <= 0) {
            n = m << -shift;                                      // exact: fewer bits than kept
        } else if (shift >= 64) {
            n = shift == 64 && m > (1ull << 63);                  // below half the least step
        } else {
            n = m >> shift;
            uint64_t rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
            n += rest > half || (rest == half && (n & 1));
        }
        // n counts steps of 2^keep; a carry into the next binade lands on its encoding.
        uint64_t bits = (uint64_t((e > emin ? e : emin) + bias - 1) << M) + n;
        return bits >= inf ? uint16_t(s | inf) : uint16_t(s | bits);
    }

    static uint16_t from_double(double d) {
        uint64_t b;
        memcpy(&b, &d, 8);
        bool neg = b >> 63;
        uint64_t mag = b & ~(1ull << 63);
        if (mag > 0x7ff0000000000000ull) return nan;
        if (mag == 0x7ff0000000000000ull) return uint16_t((neg ? sign : 0) | inf);
        int be = int(mag >> 52);
        uint64_t frac = mag & ((1ull << 52) - 1);
        return be ? round(neg, frac | (1ull << 52), be - 1075) : round(neg, frac, -1074);
    }
    static uint16_t from_signed(long long v) {
        return round(v < 0, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 0);
    }
    static uint16_t from_unsigned(unsigned long long v) { return round(false, v, 0); }

    // The exact value (NaN for every NaN).
    static double to_double(uint16_t h) {
        int ex = (h >> M) & ((1 << E) - 1);
        double mag = ex == (1 << E) - 1 ? ((h & ((1u << M) - 1)) ? __builtin_nan("") : __builtin_inf())
                     : ex ? ldexp(double((h & ((1u << M) - 1)) | (1u << M)), ex - bias - M)
                          : ldexp(double(h & ((1u << M) - 1)), emin - M);
        return (h & sign) ? -mag : mag;
    }
    static bool is_nan(uint16_t h) { return (h & 0x7fff) > inf; }
};
using Half = Format<5, 10>;
using BFloat = Format<8, 7>;

// A 16-bit type's value from its bits, and a double rounded to it (KC_LOWP_TYPE defines them
// for each type).
template <class T> T make(uint16_t bits);
template <class T> T rounded(double v);

// f() computed in double and rounded to odd: toward zero, with the last bit set if inexact.
// An exact result is the one computed to nearest, whose zero has the sign IEEE gives it
// there (x*y - x*y is +0, where rounding down would make it -0).
template <class F>
inline double round_to_odd(F f) {
    const int old = fegetround();
    double nearest = f();
    __asm__ __volatile__("" : "+m"(nearest) : : "memory");
    fesetround(FE_DOWNWARD);
    double lo = f();
    __asm__ __volatile__("" : "+m"(lo) : : "memory");
    fesetround(FE_UPWARD);
    double hi = f();
    __asm__ __volatile__("" : "+m"(hi) : : "memory");
    fesetround(old);
    if (lo == hi || lo != lo) return nearest;
    double z = fabs(lo) < fabs(hi) ? lo : hi;
    uint64_t b;
    memcpy(&b, &z, 8);
    b |= 1;
    memcpy(&z, &b, 8);
    return z;
}

// A 16-bit value to a GPU's integer conversion toward zero (cvt.rzi): saturating, NaN to 0.
template <class I>
inline I to_int_rz(double v, double least, double greatest) {
    if (v != v) return 0;
    double t = trunc(v);
    return t < least ? (I)least : t > greatest ? (I)greatest : (I)t;
}

}  // namespace lowp
}  // namespace kc


// The class, its raw structs and pair, and the operators and intrinsics CUDA gives both
// 16-bit types under one name (__hadd, __hfma2, ...): T the type, T2 its pair, RAW and RAW2
// the raw structs, F its Format, OTHER the other 16-bit type (converted explicitly), P the
// infix of its conversion intrinsics (__int2half_rn, __half_as_ushort; bfloat16 for the
// other), TO_FLOAT its conversion to float. The names each header spells its own way are in
// that header. Members and conversions are CUDA 13's (cuda_fp16.h, cuda_bf16.h).
// The arithmetic operators of CUDA's headers for a 16-bit type or pair X, from its intrinsics.
#define KC_LOWP_ARITHMETIC(X, ADD, SUB, MUL, DIV)                                                                       \
    inline X operator+(const X& a, const X& b) { return ADD(a, b); }                                                \
    inline X operator-(const X& a, const X& b) { return SUB(a, b); }                                                \
    inline X operator*(const X& a, const X& b) { return MUL(a, b); }                                                \
    inline X operator/(const X& a, const X& b) { return DIV(a, b); }                                                \
    inline X& operator+=(X& a, const X& b) { a = ADD(a, b); return a; }                                             \
    inline X& operator-=(X& a, const X& b) { a = SUB(a, b); return a; }                                             \
    inline X& operator*=(X& a, const X& b) { a = MUL(a, b); return a; }                                             \
    inline X& operator/=(X& a, const X& b) { a = DIV(a, b); return a; }

#define KC_LOWP_TYPE(T, T2, RAW, RAW2, F, OTHER, P, TO_FLOAT)                                                       \
    struct RAW { unsigned short x; };                                                                               \
    struct RAW2 { unsigned short x, y; };                                                                           \
    struct OTHER;                                                                                                   \
    struct __align__(2) T {                                                                                         \
    protected:                                                                                                      \
        unsigned short __x;                                                                                         \
                                                                                                                    \
    public:                                                                                                         \
        T() = default;                                                                                              \
        constexpr T(const RAW& r) : __x(r.x) {}                                                                     \
        T& operator=(const RAW& r) { __x = r.x; return *this; }                                                     \
        volatile T& operator=(const RAW& r) volatile { __x = r.x; return *this; }                                   \
        volatile T& operator=(const volatile RAW& r) volatile { __x = r.x; return *this; }                          \
        operator RAW() const { return RAW{__x}; }                                                                   \
        operator RAW() const volatile { return RAW{__x}; }                                                          \
        explicit T(const OTHER f);                                                                                  \
        T(const float f) : __x(F::from_double(f)) {}                                                                \
        T(const double f) : __x(F::from_double(f)) {}                                                               \
        operator float() const { return TO_FLOAT(__x); }                                                            \
        T& operator=(const float f) { __x = F::from_double(f); return *this; }                                      \
        T& operator=(const double f) { __x = F::from_double(f); return *this; }                                     \
        T(const short v) : __x(F::from_signed(v)) {}                                                                \
        T(const unsigned short v) : __x(F::from_unsigned(v)) {}                                                     \
        T(const int v) : __x(F::from_signed(v)) {}                                                                  \
        T(const unsigned int v) : __x(F::from_unsigned(v)) {}                                                       \
        T(const long v) : __x(F::from_signed(v)) {}                                                                 \
        T(const unsigned long v) : __x(F::from_unsigned(v)) {}                                                      \
        T(const long long v) : __x(F::from_signed(v)) {}                                                            \
        T(const unsigned long long v) : __x(F::from_unsigned(v)) {}                                                 \
        operator signed char() const { return kc::lowp::to_int_rz<signed char>(F::to_double(__x), -128, 127); }     \
        operator unsigned char() const { return kc::lowp::to_int_rz<unsigned char>(F::to_double(__x), 0, 255); }    \
        operator char() const { return kc::lowp::to_int_rz<char>(F::to_double(__x), CHAR_MIN, CHAR_MAX); }          \
        operator short() const { return kc::lowp::to_int_rz<short>(F::to_double(__x), -32768, 32767); }            \
        operator unsigned short() const { return kc::lowp::to_int_rz<unsigned short>(F::to_double(__x), 0, 65535); } \
        operator int() const { return __float2int_rz(TO_FLOAT(__x)); }                                             \
        operator unsigned int() const { return __float2uint_rz(TO_FLOAT(__x)); }                                    \
        operator long() const { return (long)__float2ll_rz(TO_FLOAT(__x)); }                                        \
        operator unsigned long() const { return (unsigned long)__float2ull_rz(TO_FLOAT(__x)); }                     \
        operator long long() const { return __float2ll_rz(TO_FLOAT(__x)); }                                         \
        operator unsigned long long() const { return __float2ull_rz(TO_FLOAT(__x)); }                               \
        T& operator=(const short v) { return *this = T(v); }                                                        \
        T& operator=(const unsigned short v) { return *this = T(v); }                                               \
        T& operator=(const int v) { return *this = T(v); }                                                          \
        T& operator=(const unsigned int v) { return *this = T(v); }                                                 \
        T& operator=(const long long v) { return *this = T(v); }                                                    \
        T& operator=(const unsigned long long v) { return *this = T(v); }                                           \
        constexpr operator bool() const { return (__x & 0x7fffu) != 0u; }                                           \
    };                                                                                                              \
    struct __align__(4) T2 {                                                                                        \
        T x;                                                                                                        \
        T y;                                                                                                        \
        T2() = default;                                                                                             \
        constexpr T2(const T& a, const T& b) : x(a), y(b) {}                                                        \
        T2(const RAW2& r) : x(RAW{r.x}), y(RAW{r.y}) {}                                                             \
        T2& operator=(const RAW2& r) { x = RAW{r.x}; y = RAW{r.y}; return *this; }                                  \
        operator RAW2() const { return RAW2{RAW(x).x, RAW(y).x}; }                                                  \
    };                                                                                                              \
    namespace kc {                                                                                                  \
    template <> struct shuffled<T> { static constexpr bool ok = true; };                                            \
    template <> struct shuffled<T2> { static constexpr bool ok = true; };                                           \
    namespace lowp {                                                                                                \
    inline uint16_t bits(T h) { return RAW(h).x; }                                                                  \
    template <> inline T make<T>(uint16_t b) { return T(RAW{b}); }                                                   \
    inline double value(T h) { return F::to_double(bits(h)); }                                                      \
    template <> inline T rounded<T>(double v) { return make<T>(F::from_double(v)); }                                \
    /* clamped to [+0, 1], NaN to +0: the _sat forms */                                                             \
    inline T saturated(T h) { double v = value(h); return !(v > 0) ? make<T>(0) : v > 1 ? rounded<T>(1.0) : h; }          \
    }                                                                                                               \
    }                                                                                                               \
    /* arithmetic: one rounding of the exact result (see the top of this file) */                                   \
    inline T __hadd(const T a, const T b) { using namespace kc::lowp; return rounded<T>(value(a) + value(b)); }         \
    inline T __hsub(const T a, const T b) { using namespace kc::lowp; return rounded<T>(value(a) - value(b)); }         \
    inline T __hmul(const T a, const T b) { using namespace kc::lowp; return rounded<T>(value(a) * value(b)); }         \
    inline T __hdiv(const T a, const T b) { using namespace kc::lowp; return rounded<T>(value(a) / value(b)); }         \
    inline T __hfma(const T a, const T b, const T c) {                                                              \
        using namespace kc::lowp;                                                                                   \
        double x = value(a), y = value(b), z = value(c);                                                            \
        return rounded<T>(round_to_odd([&] { volatile double u = x, v = y, w = z; return fma(u, v, w); }));            \
    }                                                                                                               \
    inline T __hadd_rn(const T a, const T b) { return __hadd(a, b); }                                               \
    inline T __hsub_rn(const T a, const T b) { return __hsub(a, b); }                                               \
    inline T __hmul_rn(const T a, const T b) { return __hmul(a, b); }                                               \
    inline T __hadd_sat(const T a, const T b) { return kc::lowp::saturated(__hadd(a, b)); }                         \
    inline T __hsub_sat(const T a, const T b) { return kc::lowp::saturated(__hsub(a, b)); }                         \
    inline T __hmul_sat(const T a, const T b) { return kc::lowp::saturated(__hmul(a, b)); }                         \
    inline T __hfma_sat(const T a, const T b, const T c) { return kc::lowp::saturated(__hfma(a, b, c)); }           \
    inline T __hneg(const T a) { return kc::lowp::make<T>(uint16_t(kc::lowp::bits(a) ^ 0x8000u)); }                    \
    inline T __habs(const T a) { return kc::lowp::make<T>(uint16_t(kc::lowp::bits(a) & 0x7fffu)); }                    \
    inline T hsqrt(const T a) { return kc::lowp::rounded<T>(sqrt(kc::lowp::value(a))); }                               \
    /* comparisons: ordered (false with a NaN), and the unordered ...u forms (true with a NaN) */                   \
    inline bool __hisnan(const T a) { return F::is_nan(kc::lowp::bits(a)); }                                        \
    inline int __hisinf(const T a) {                                                                                \
        uint16_t b = kc::lowp::bits(a);                                                                             \
        return (b & 0x7fffu) == F::inf ? ((b & 0x8000u) ? -1 : 1) : 0;                                              \
    }                                                                                                               \
    inline bool __heq(const T a, const T b) { return kc::lowp::value(a) == kc::lowp::value(b); }                    \
    inline bool __hlt(const T a, const T b) { return kc::lowp::value(a) < kc::lowp::value(b); }                     \
    inline bool __hle(const T a, const T b) { return kc::lowp::value(a) <= kc::lowp::value(b); }                    \
    inline bool __hgt(const T a, const T b) { return kc::lowp::value(a) > kc::lowp::value(b); }                     \
    inline bool __hge(const T a, const T b) { return kc::lowp::value(a) >= kc::lowp::value(b); }                    \
    inline bool __hne(const T a, const T b) { return __hlt(a, b) || __hgt(a, b); }                                  \
    inline bool __hequ(const T a, const T b) { return !__hne(a, b); }                                               \
    inline bool __hneu(const T a, const T b) { return !__heq(a, b); }                                               \
    inline bool __hltu(const T a, const T b) { return !__hge(a, b); }                                               \
    inline bool __hleu(const T a, const T b) { return !__hgt(a, b); }                                               \
    inline bool __hgtu(const T a, const T b) { return !__hle(a, b); }                                               \
    inline bool __hgeu(const T a, const T b) { return !__hlt(a, b); }                                               \
    /* min and max: a NaN operand gives the other one (both NaN: the canonical NaN), -0 is below */                \
    /* +0; the _nan forms give the canonical NaN for any NaN operand */                                             \
    inline T __hmax(const T a, const T b) { return kc::lowp::rounded<T>(kc::intr::fmax_(kc::lowp::value(a), kc::lowp::value(b))); } \
    inline T __hmin(const T a, const T b) { return kc::lowp::rounded<T>(kc::intr::fmin_(kc::lowp::value(a), kc::lowp::value(b))); } \
    inline T __hmax_nan(const T a, const T b) { return __hisnan(a) || __hisnan(b) ? kc::lowp::make<T>(F::nan) : __hmax(a, b); } \
    inline T __hmin_nan(const T a, const T b) { return __hisnan(a) || __hisnan(b) ? kc::lowp::make<T>(F::nan) : __hmin(a, b); } \
    /* the operators of CUDA's headers */                                                                           \
    KC_LOWP_ARITHMETIC(T, __hadd, __hsub, __hmul, __hdiv)                                                           \
    inline T& operator++(T& h) { h += kc::lowp::rounded<T>(1.0); return h; }                                           \
    inline T& operator--(T& h) { h -= kc::lowp::rounded<T>(1.0); return h; }                                           \
    inline T operator++(T& h, const int) { const T r = h; ++h; return r; }                                          \
    inline T operator--(T& h, const int) { const T r = h; --h; return r; }                                          \
    inline T operator+(const T& h) { return h; }                                                                    \
    inline T operator-(const T& h) { return __hneg(h); }                                                            \
    inline bool operator==(const T& a, const T& b) { return __heq(a, b); }                                          \
    inline bool operator!=(const T& a, const T& b) { return __hneu(a, b); }                                         \
    inline bool operator>(const T& a, const T& b) { return __hgt(a, b); }                                           \
    inline bool operator<(const T& a, const T& b) { return __hlt(a, b); }                                           \
    inline bool operator>=(const T& a, const T& b) { return __hge(a, b); }                                          \
    inline bool operator<=(const T& a, const T& b) { return __hle(a, b); }                                          \
    /* bits and integers */                                                                                         \
    inline unsigned short __##P##_as_ushort(const T h) { return kc::lowp::bits(h); }                                \
    inline short __##P##_as_short(const T h) { return (short)kc::lowp::bits(h); }                                   \
    inline T __ushort_as_##P(const unsigned short b) { return kc::lowp::make<T>(b); }                                  \
    inline T __short_as_##P(const short b) { return kc::lowp::make<T>((uint16_t)b); }                                  \
    inline T __int2##P##_rn(const int v) { return kc::lowp::make<T>(F::from_signed(v)); }                              \
    inline T __uint2##P##_rn(const unsigned int v) { return kc::lowp::make<T>(F::from_unsigned(v)); }                  \
    inline T __short2##P##_rn(const short v) { return kc::lowp::make<T>(F::from_signed(v)); }                          \
    inline T __ushort2##P##_rn(const unsigned short v) { return kc::lowp::make<T>(F::from_unsigned(v)); }              \
    inline T __ll2##P##_rn(const long long v) { return kc::lowp::make<T>(F::from_signed(v)); }                         \
    inline T __ull2##P##_rn(const unsigned long long v) { return kc::lowp::make<T>(F::from_unsigned(v)); }             \
    inline T __double2##P(const double v) { return kc::lowp::rounded<T>(v); }                                         \
    inline int __##P##2int_rz(const T h) { return int(h); }                                                         \
    inline unsigned int __##P##2uint_rz(const T h) { return (unsigned int)h; }                                      \
    inline short __##P##2short_rz(const T h) { return short(h); }                                                   \
    inline unsigned short __##P##2ushort_rz(const T h) { return (unsigned short)h; }                                \
    inline long long __##P##2ll_rz(const T h) { return (long long)h; }                                              \
    inline unsigned long long __##P##2ull_rz(const T h) { return (unsigned long long)h; }                           \
    inline int __##P##2int_rn(const T h) { return __float2int_rn(TO_FLOAT(kc::lowp::bits(h))); }                    \
    inline int __##P##2int_rd(const T h) { return __float2int_rd(TO_FLOAT(kc::lowp::bits(h))); }                   \
    inline int __##P##2int_ru(const T h) { return __float2int_ru(TO_FLOAT(kc::lowp::bits(h))); }                   \
    /* pairs: each half as above */                                                                                 \
    inline T2 __hadd2(const T2 a, const T2 b) { return T2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }                    \
    inline T2 __hsub2(const T2 a, const T2 b) { return T2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }                    \
    inline T2 __hmul2(const T2 a, const T2 b) { return T2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }                    \
    inline T2 __h2div(const T2 a, const T2 b) { return T2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }                    \
    inline T2 __hfma2(const T2 a, const T2 b, const T2 c) { return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    inline T2 __hneg2(const T2 a) { return T2(__hneg(a.x), __hneg(a.y)); }                                          \
    inline T2 __habs2(const T2 a) { return T2(__habs(a.x), __habs(a.y)); }                                          \
    inline bool __hbeq2(const T2 a, const T2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }                      \
    inline bool __hbneu2(const T2 a, const T2 b) { return __hneu(a.x, b.x) && __hneu(a.y, b.y); }                   \
    inline bool __hblt2(const T2 a, const T2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }                      \
    inline bool __hble2(const T2 a, const T2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }                      \
    inline bool __hbgt2(const T2 a, const T2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }                      \
    inline bool __hbge2(const T2 a, const T2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }                      \
    KC_LOWP_ARITHMETIC(T2, __hadd2, __hsub2, __hmul2, __h2div)                                                      \
    inline T2 operator+(const T2& h) { return h; }                                                                  \
    inline T2 operator-(const T2& h) { return __hneg2(h); }                                                         \
    inline bool operator==(const T2& a, const T2& b) { return __hbeq2(a, b); }                                      \
    inline bool operator!=(const T2& a, const T2& b) { return __hbneu2(a, b); }                                     \
    inline bool operator<(const T2& a, const T2& b) { return __hblt2(a, b); }                                       \
    inline bool operator<=(const T2& a, const T2& b) { return __hble2(a, b); }                                      \
    inline bool operator>(const T2& a, const T2& b) { return __hbgt2(a, b); }                                       \
    inline bool operator>=(const T2& a, const T2& b) { return __hbge2(a, b); }                                      \
    inline float __low2float(const T2 a) { return float(a.x); }                                                     \
    inline float __high2float(const T2 a) { return float(a.y); }

// The conversions CUDA names per type (cuda_fp16.h: __float2half, __half2float,
// __floats2half2_rn, ...; cuda_bf16.h the same with bfloat16), given their names in order:
// float to T (plain and _rn), T to float, two floats to T2, one float to both halves, a
// float2 to T2, T2 to float2, two T to T2, one T to both halves, T2's low and high halves.
#define KC_LOWP_CONVERSIONS(T, T2, F2T, F2T_RN, T2F, FS2T2, F2T2, F22T2, T22F2, TS2T2, T2T2, LOW, HIGH)      \
    inline T F2T(const float a) { return T(a); }                                                              \
    inline T F2T_RN(const float a) { return T(a); }                                                           \
    inline float T2F(const T a) { return float(a); }                                                          \
    inline T2 FS2T2(const float a, const float b) { return T2(T(a), T(b)); }                                   \
    inline T2 F2T2(const float a) { return FS2T2(a, a); }                                                     \
    inline T2 F22T2(const float2 a) { return FS2T2(a.x, a.y); }                                               \
    inline float2 T22F2(const T2 a) { return make_float2(float(a.x), float(a.y)); }                           \
    inline T2 TS2T2(const T a, const T b) { return T2(a, b); }                                                \
    inline T2 T2T2(const T a) { return T2(a, a); }                                                            \
    inline T LOW(const T2 a) { return a.x; }                                                                  \
    inline T HIGH(const T2 a) { return a.y; }
