// Arithmetic as nvcc and NVRTC compile it, where C++ on a CPU computes something else.
//
// The front end (runtime/cudacheck/arith.py) rewrites device code, keeping every line, to
// call these where it matters:
//   - a*b + c (and a*b - c, c - a*b, s += a*b, ...) of float or double: one fused
//     multiply-add, rounded once, as nvcc contracts it by default (-fmad=true);
//   - float or double to an integer type: saturated to the type's range (cvt.rzi.sat), a
//     NaN to the value the GPU gives; to a type narrower than 32 bits, through the 32-bit
//     type of its signedness and then truncated, as the GPU's code does;
//   - shifts by the width of the type or more (or by a negative amount, which PTX reads as
//     unsigned): 0, or for >> of a negative signed value -1 (PTX's shl and shr clamp the
//     amount), where x86 shifts by the amount modulo the width.
// Every helper takes any operand types: in template code, whose types the front end cannot
// see, an operand of another kind (a struct with its own operator*, an enum, a pointer)
// gets the operation as written.
#pragma once

namespace kc {
namespace arith {
template <class T> struct bare { using type = T; };
template <class T> struct bare<T&> { using type = T; };
template <class T> struct bare<T&&> { using type = T; };
template <class T> struct bare<const T> { using type = T; };
template <class T> struct bare<volatile T> { using type = T; };
template <class T> struct bare<const volatile T> { using type = T; };
template <class T> using bare_t = typename bare<typename bare<T>::type>::type;

template <class T> struct is_float { static constexpr bool value = false; };
template <> struct is_float<float> { static constexpr bool value = true; };
template <> struct is_float<double> { static constexpr bool value = true; };
template <class T> struct is_int { static constexpr bool value = false; static constexpr bool is_signed = false; };
#define KC_INT(T, S) template <> struct is_int<T> { static constexpr bool value = true, is_signed = S; };
KC_INT(bool, false) KC_INT(char, (char)-1 < 0) KC_INT(signed char, true) KC_INT(unsigned char, false)
KC_INT(short, true) KC_INT(unsigned short, false) KC_INT(int, true) KC_INT(unsigned, false)
KC_INT(long, true) KC_INT(unsigned long, false) KC_INT(long long, true) KC_INT(unsigned long long, false)
KC_INT(char16_t, false) KC_INT(char32_t, false) KC_INT(wchar_t, true)
#undef KC_INT
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
template <class T> T&& declval();
template <bool B, class T, class F> struct pick { using type = T; };
template <class T, class F> struct pick<false, T, F> { using type = F; };
// An integer operand's type after promotion (char to int); any other type as it is.
template <class T, bool = is_int<bare_t<T>>::value> struct promote { using type = bare_t<T>; };
template <class T> struct promote<T, true> { using type = decltype(+declval<bare_t<T>>()); };
// A shift amount as PTX reads it: unsigned, so that a negative one is large.
template <class N> constexpr unsigned long long amount(N n) {
    using P = typename promote<N>::type;
    return sizeof(P) >= 8 ? static_cast<unsigned long long>(P(n)) : static_cast<unsigned long long>(P(n)) & 0xffffffffull;
}

constexpr float fused(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
constexpr double fused(double a, double b, double c) { return __builtin_fma(a, b, c); }

// Whether a*b + c contracts: the product and the sum are of one floating type.
template <class A, class B, class C> constexpr bool contracts() {
    using M = bare_t<decltype(declval<A>() * declval<B>())>;
    if constexpr (is_float<M>::value) return same<M, bare_t<decltype(declval<M>() + declval<C>())>>::value;
    else return false;
}

// Float to integer as cvt.rzi.sat: in range, truncation; out of range, the nearest bound;
// NaN, what sm_90 gives (0 from float to 32 bits; otherwise the sign bit alone, or
// INT_MIN for double to int).
template <class I, class F> constexpr I saturate(F f) {
    constexpr bool sgn = is_int<I>::is_signed;
    constexpr int bits = sizeof(I) * 8;
    if constexpr (bits < 32) {
        using W = typename pick<sgn, int, unsigned>::type;
        return static_cast<I>(saturate<W>(f));
    } else {
        using U = unsigned long long;
        const I lo = sgn ? static_cast<I>(U(1) << (bits - 1)) : I(0);
        const I hi = sgn ? static_cast<I>(~U(0) >> (65 - bits)) : static_cast<I>(~U(0) >> (64 - bits));
        if (f != f) {
            if constexpr (bits == 32 && same<F, float>::value) return I(0);
            else return static_cast<I>(U(1) << (bits - 1));
        }
        if (f <= static_cast<F>(lo)) return lo;
        if (f >= static_cast<F>(hi)) return hi;
        return static_cast<I>(f);
    }
}
}  // namespace arith

// ---- the helpers the rewritten source calls ---------------------------------------------

// (T)f, `T x = f` and every other conversion of a floating value to an integer type T.
template <class T, class F> constexpr T cvt(F&& f) {
    using V = arith::bare_t<F>;
    if constexpr (arith::is_float<V>::value && arith::is_int<T>::value && !arith::same<T, bool>::value)
        return arith::saturate<T>(static_cast<V>(f));
    else
        return (T)(static_cast<F&&>(f));
}

// a*b + c, a*b - c, x + a*b, x - a*b: one rounding where they contract.
template <class A, class B, class C> constexpr decltype(auto) mad(A&& a, B&& b, C&& c) {
    if constexpr (arith::contracts<A, B, C>()) {
        using M = arith::bare_t<decltype(a * b)>;
        return arith::fused(M(a), M(b), M(c));
    } else return static_cast<A&&>(a) * static_cast<B&&>(b) + static_cast<C&&>(c);
}
template <class A, class B, class C> constexpr decltype(auto) msub(A&& a, B&& b, C&& c) {
    if constexpr (arith::contracts<A, B, C>()) {
        using M = arith::bare_t<decltype(a * b)>;
        return arith::fused(M(a), M(b), -M(c));
    } else return static_cast<A&&>(a) * static_cast<B&&>(b) - static_cast<C&&>(c);
}
template <class X, class A, class B> constexpr decltype(auto) add_mul(X&& x, A&& a, B&& b) {
    if constexpr (arith::contracts<A, B, X>()) {
        using M = arith::bare_t<decltype(a * b)>;
        return arith::fused(M(a), M(b), M(x));
    } else return static_cast<X&&>(x) + static_cast<A&&>(a) * static_cast<B&&>(b);
}
template <class X, class A, class B> constexpr decltype(auto) sub_mul(X&& x, A&& a, B&& b) {
    if constexpr (arith::contracts<A, B, X>()) {
        using M = arith::bare_t<decltype(a * b)>;
        return arith::fused(-M(a), M(b), M(x));
    } else return static_cast<X&&>(x) - static_cast<A&&>(a) * static_cast<B&&>(b);
}
// s += a*b and s -= a*b: s = s ± a*b with one rounding, then converted back to s's type.
template <class S, class A, class B> constexpr S& add_mul_to(S& s, A&& a, B&& b) {
    if constexpr (arith::contracts<A, B, S>()) {
        using M = arith::bare_t<decltype(a * b)>;
        s = cvt<arith::bare_t<S>>(arith::fused(M(a), M(b), M(s)));
        return s;
    } else return s += static_cast<A&&>(a) * static_cast<B&&>(b);
}
template <class S, class A, class B> constexpr S& sub_mul_to(S& s, A&& a, B&& b) {
    if constexpr (arith::contracts<A, B, S>()) {
        using M = arith::bare_t<decltype(a * b)>;
        s = cvt<arith::bare_t<S>>(arith::fused(-M(a), M(b), M(s)));
        return s;
    } else return s -= static_cast<A&&>(a) * static_cast<B&&>(b);
}

// a << n and a >> n with PTX's clamped amount (read as unsigned: a negative one is large).
template <class A, class N> constexpr decltype(auto) shl(A&& a, N&& n) {
    using P = typename arith::promote<A>::type;
    if constexpr (arith::is_int<P>::value && arith::is_int<arith::bare_t<N>>::value) {
        const unsigned long long k = arith::amount(n);
        return k >= sizeof(P) * 8 ? P(0) : P(static_cast<unsigned long long>(P(a)) << k);
    } else return static_cast<A&&>(a) << static_cast<N&&>(n);
}
template <class A, class N> constexpr decltype(auto) shr(A&& a, N&& n) {
    using P = typename arith::promote<A>::type;
    if constexpr (arith::is_int<P>::value && arith::is_int<arith::bare_t<N>>::value) {
        const unsigned long long k = arith::amount(n);
        if (k >= sizeof(P) * 8) return arith::is_int<P>::is_signed && P(a) < P(0) ? P(~P(0)) : P(0);
        return P(P(a) >> k);
    } else return static_cast<A&&>(a) >> static_cast<N&&>(n);
}
template <class A, class N> constexpr A& shl_to(A& a, N&& n) {
    if constexpr (arith::is_int<arith::bare_t<A>>::value) { a = static_cast<arith::bare_t<A>>(shl(a, n)); return a; }
    else return a <<= static_cast<N&&>(n);
}
template <class A, class N> constexpr A& shr_to(A& a, N&& n) {
    if constexpr (arith::is_int<arith::bare_t<A>>::value) { a = static_cast<arith::bare_t<A>>(shr(a, n)); return a; }
    else return a >>= static_cast<N&&>(n);
}
}  // namespace kc
