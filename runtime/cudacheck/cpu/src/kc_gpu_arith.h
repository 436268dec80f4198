// Arithmetic as nvcc and NVRTC compile it, where C++ on a CPU computes something else.
//
// The front end (runtime/cudacheck/frontend/arith.py) rewrites device code, keeping every line, to
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
template <class kc_T> struct bare { using type = kc_T; };
template <class kc_T> struct bare<kc_T&> { using type = kc_T; };
template <class kc_T> struct bare<kc_T&&> { using type = kc_T; };
template <class kc_T> struct bare<const kc_T> { using type = kc_T; };
template <class kc_T> struct bare<volatile kc_T> { using type = kc_T; };
template <class kc_T> struct bare<const volatile kc_T> { using type = kc_T; };
template <class kc_T> using bare_t = typename bare<typename bare<kc_T>::type>::type;

template <class kc_T> struct is_float { static constexpr bool value = false; };
template <> struct is_float<float> { static constexpr bool value = true; };
template <> struct is_float<double> { static constexpr bool value = true; };
template <class kc_T> struct is_int { static constexpr bool value = false; static constexpr bool is_signed = false; };
#define KC_INT(T, S) template <> struct is_int<T> { static constexpr bool value = true, is_signed = S; };
KC_INT(bool, false) KC_INT(char, (char)-1 < 0) KC_INT(signed char, true) KC_INT(unsigned char, false)
KC_INT(short, true) KC_INT(unsigned short, false) KC_INT(int, true) KC_INT(unsigned, false)
KC_INT(long, true) KC_INT(unsigned long, false) KC_INT(long long, true) KC_INT(unsigned long long, false)
KC_INT(char16_t, false) KC_INT(char32_t, false) KC_INT(wchar_t, true)
#undef KC_INT
template <class kc_A, class kc_B> struct same { static constexpr bool value = false; };
template <class kc_A> struct same<kc_A, kc_A> { static constexpr bool value = true; };
template <class kc_T> kc_T&& declval();
template <bool kc_B, class kc_T, class kc_F> struct pick { using type = kc_T; };
template <class kc_T, class kc_F> struct pick<false, kc_T, kc_F> { using type = kc_F; };
// An integer operand's type after promotion (char to int); any other type as it is.
template <class kc_T, bool = is_int<bare_t<kc_T>>::value> struct promote { using type = bare_t<kc_T>; };
template <class kc_T> struct promote<kc_T, true> { using type = decltype(+declval<bare_t<kc_T>>()); };
// A shift amount as PTX reads it: unsigned, so that a negative one is large.
template <class kc_N> constexpr unsigned long long amount(kc_N kc_n) {
    using kc_P = typename promote<kc_N>::type;
    return sizeof(kc_P) >= 8 ? static_cast<unsigned long long>(kc_P(kc_n)) : static_cast<unsigned long long>(kc_P(kc_n)) & 0xffffffffull;
}

// a*b + c of float or double, rounded once.
template <class kc_T> constexpr kc_T fused(kc_T kc_a, kc_T kc_b, kc_T kc_c) {
    if constexpr (same<kc_T, float>::value) return __builtin_fmaf(kc_a, kc_b, kc_c);
    else return __builtin_fma(kc_a, kc_b, kc_c);
}

// Whether a*b + c contracts: the product and the sum are of one floating type.
template <class kc_A, class kc_B, class kc_C> constexpr bool contracts() {
    using kc_M = bare_t<decltype(declval<kc_A>() * declval<kc_B>())>;
    if constexpr (is_float<kc_M>::value) return same<kc_M, bare_t<decltype(declval<kc_M>() + declval<kc_C>())>>::value;
    else return false;
}

// Float to integer as cvt.rzi.sat: in range, truncation; out of range, the nearest bound;
// NaN, what sm_90 gives (0 from float to 32 bits; otherwise the sign bit alone, or
// INT_MIN for double to int).
template <class kc_I, class kc_F> constexpr kc_I saturate(kc_F kc_f) {
    constexpr bool sgn = is_int<kc_I>::is_signed;
    constexpr int bits = sizeof(kc_I) * 8;
    if constexpr (bits < 32) {
        using kc_W = typename pick<sgn, int, unsigned>::type;
        return static_cast<kc_I>(saturate<kc_W>(kc_f));
    } else {
        using kc_U = unsigned long long;
        const kc_I lo = sgn ? static_cast<kc_I>(kc_U(1) << (bits - 1)) : kc_I(0);
        const kc_I hi = sgn ? static_cast<kc_I>(~kc_U(0) >> (65 - bits)) : static_cast<kc_I>(~kc_U(0) >> (64 - bits));
        if (kc_f != kc_f) {
            if constexpr (bits == 32 && same<kc_F, float>::value) return kc_I(0);
            else return static_cast<kc_I>(kc_U(1) << (bits - 1));
        }
        if (kc_f <= static_cast<kc_F>(lo)) return lo;
        if (kc_f >= static_cast<kc_F>(hi)) return hi;
        return static_cast<kc_I>(kc_f);
    }
}

// Where a multiply-add's addend c stands: a*b ± c, c ± a*b, or c ±= a*b.
enum where { after, before, target };
}  // namespace arith

// ---- the helpers the rewritten source calls ---------------------------------------------

// (T)f, `T x = f` and every other conversion of a floating value to an integer type T.
// By value: the operand is loaded where the source converts it (see mad_ below).
template <class kc_T, class kc_F> constexpr kc_T cvt(kc_F kc_f) {
    using kc_V = arith::bare_t<kc_F>;
    if constexpr (arith::is_float<kc_V>::value && arith::is_int<kc_T>::value && !arith::same<kc_T, bool>::value)
        return arith::saturate<kc_T>(static_cast<kc_V>(kc_f));
    else
        return (kc_T)(static_cast<kc_F&&>(kc_f));
}

// Every multiply-add, its operands in the source's order (x, y, z): x*y ± z, -(x*y) ± z
// (kc_Where arith::after), x ± y*z (arith::before) and x ±= y*z (arith::target, x by
// reference). kc_NegP: the product is subtracted or negated; kc_NegC: the addend after it is
// subtracted. Where they contract, one rounding, fused(±a, b, ±c), each operand converted to
// the product's type in the order the source evaluates them (for x ±= y*z the right side
// first, as C++17 does), and x ±= y*z's result converted back to x's type; otherwise the
// expression as written.
#define KC_FWD(kc_v) static_cast<decltype(kc_v)&&>(kc_v)
template <arith::where kc_Where, bool kc_NegP, bool kc_NegC, class kc_X, class kc_Y, class kc_Z>
constexpr decltype(auto) mul_add(kc_X&& kc_x, kc_Y&& kc_y, kc_Z&& kc_z) {
    static_assert(kc_Where == arith::after || !kc_NegC, "only a*b - c subtracts the addend");
    if constexpr (kc_Where == arith::after) {
        if constexpr (arith::contracts<kc_X, kc_Y, kc_Z>()) {
            using kc_M = arith::bare_t<decltype(kc_x * kc_y)>;
            const kc_M kc_a = kc_M(kc_x), kc_b = kc_M(kc_y), kc_c = kc_M(kc_z);
            return arith::fused(kc_NegP ? -kc_a : kc_a, kc_b, kc_NegC ? -kc_c : kc_c);
        } else if constexpr (!kc_NegP && !kc_NegC) return KC_FWD(kc_x) * KC_FWD(kc_y) + KC_FWD(kc_z);
        else if constexpr (!kc_NegP) return KC_FWD(kc_x) * KC_FWD(kc_y) - KC_FWD(kc_z);
        else if constexpr (!kc_NegC) return -(KC_FWD(kc_x) * KC_FWD(kc_y)) + KC_FWD(kc_z);
        else return -(KC_FWD(kc_x) * KC_FWD(kc_y)) - KC_FWD(kc_z);
    } else if constexpr (arith::contracts<kc_Y, kc_Z, kc_X>()) {
        using kc_M = arith::bare_t<decltype(kc_y * kc_z)>;
        if constexpr (kc_Where == arith::before) {
            const kc_M kc_c = kc_M(kc_x), kc_a = kc_M(kc_y), kc_b = kc_M(kc_z);
            return arith::fused(kc_NegP ? -kc_a : kc_a, kc_b, kc_c);
        } else {
            const kc_M kc_a = kc_M(kc_y), kc_b = kc_M(kc_z), kc_c = kc_M(kc_x);   // C++17: the right side first
            kc_x = cvt<arith::bare_t<kc_X>>(arith::fused(kc_NegP ? -kc_a : kc_a, kc_b, kc_c));
            return kc_x;
        }
    } else if constexpr (kc_Where == arith::before) {
        if constexpr (kc_NegP) return KC_FWD(kc_x) - KC_FWD(kc_y) * KC_FWD(kc_z);
        else return KC_FWD(kc_x) + KC_FWD(kc_y) * KC_FWD(kc_z);
    } else if constexpr (kc_NegP) return static_cast<kc_X&>(kc_x -= KC_FWD(kc_y) * KC_FWD(kc_z));
    else return static_cast<kc_X&>(kc_x += KC_FWD(kc_y) * KC_FWD(kc_z));
}
#undef KC_FWD

// a << n and a >> n with PTX's clamped amount (read as unsigned: a negative one is large).
template <class kc_A, class kc_N> constexpr decltype(auto) shl(kc_A&& kc_a, kc_N&& kc_n) {
    using kc_P = typename arith::promote<kc_A>::type;
    if constexpr (arith::is_int<kc_P>::value && arith::is_int<arith::bare_t<kc_N>>::value) {
        const unsigned long long kc_k = arith::amount(kc_n);
        return kc_k >= sizeof(kc_P) * 8 ? kc_P(0) : kc_P(static_cast<unsigned long long>(kc_P(kc_a)) << kc_k);
    } else return static_cast<kc_A&&>(kc_a) << static_cast<kc_N&&>(kc_n);
}
template <class kc_A, class kc_N> constexpr decltype(auto) shr(kc_A&& kc_a, kc_N&& kc_n) {
    using kc_P = typename arith::promote<kc_A>::type;
    if constexpr (arith::is_int<kc_P>::value && arith::is_int<arith::bare_t<kc_N>>::value) {
        const unsigned long long kc_k = arith::amount(kc_n);
        if (kc_k >= sizeof(kc_P) * 8) return arith::is_int<kc_P>::is_signed && kc_P(kc_a) < kc_P(0) ? kc_P(~kc_P(0)) : kc_P(0);
        return kc_P(kc_P(kc_a) >> kc_k);
    } else return static_cast<kc_A&&>(kc_a) >> static_cast<kc_N&&>(kc_n);
}
template <class kc_A, class kc_N> constexpr kc_A& shl_to(kc_A& kc_a, kc_N&& kc_n) {
    if constexpr (arith::is_int<arith::bare_t<kc_A>>::value) { kc_a = static_cast<arith::bare_t<kc_A>>(shl(kc_a, kc_n)); return kc_a; }
    else return kc_a <<= static_cast<kc_N&&>(kc_n);
}
template <class kc_A, class kc_N> constexpr kc_A& shr_to(kc_A& kc_a, kc_N&& kc_n) {
    if constexpr (arith::is_int<arith::bare_t<kc_A>>::value) { kc_a = static_cast<arith::bare_t<kc_A>>(shr(kc_a, kc_n)); return kc_a; }
    else return kc_a >>= static_cast<kc_N&&>(kc_n);
}

// The rewritten source calls each helper through one of these, `::kc::mad_{a, b, c}()`: a
// braced list evaluates its operands left to right, as the source reads (a call's arguments
// may be evaluated in any order: g++ goes right to left), and takes them by value, so each
// operand is loaded where the source writes it: the loads of `s += Mds[ty][k] * Nds[k][tx]`
// are traced in that order, at that line, and checked mode's bounds check sees a load of
// N_s[0][16] (a reference to it would be one past the row's end, which C++ allows). The
// compound forms take their target by reference.
// The multiply-adds' names (one for each of mul_add's forms) are the rewriter's: a braced list
// deduces its operands' types only for a class template named whole, not for mul_add<...>.
#define KC_IN_ORDER3(kc_name, kc_Ref, kc_Where, kc_NegP, kc_NegC)                                   \
    template <class kc_A, class kc_B, class kc_C> struct kc_name {                                  \
        kc_A kc_Ref kc_a;                                                                           \
        kc_B kc_b;                                                                                  \
        kc_C kc_c;                                                                                  \
        constexpr decltype(auto) operator()() {                                                     \
            return ::kc::mul_add<arith::kc_Where, kc_NegP, kc_NegC>(kc_a, kc_b, kc_c);              \
        }                                                                                           \
    };                                                                                              \
    template <class kc_A, class kc_B, class kc_C> kc_name(kc_A kc_Ref, kc_B, kc_C) -> kc_name<kc_A, kc_B, kc_C>;
#define KC_IN_ORDER2(kc_name, kc_fn, kc_Ref)                                                          \
    template <class kc_A, class kc_B> struct kc_name {                                              \
        kc_A kc_Ref kc_a;                                                                           \
        kc_B kc_b;                                                                                  \
        constexpr decltype(auto) operator()() { return kc_fn(kc_a, kc_b); }                          \
    };                                                                                              \
    template <class kc_A, class kc_B> kc_name(kc_A kc_Ref, kc_B) -> kc_name<kc_A, kc_B>;
#define KC_VALUE
KC_IN_ORDER3(mad_, KC_VALUE, after, false, false) KC_IN_ORDER3(msub_, KC_VALUE, after, false, true)
KC_IN_ORDER3(neg_mad_, KC_VALUE, after, true, false) KC_IN_ORDER3(neg_msub_, KC_VALUE, after, true, true)
KC_IN_ORDER3(add_mul_, KC_VALUE, before, false, false) KC_IN_ORDER3(sub_mul_, KC_VALUE, before, true, false)
KC_IN_ORDER3(add_mul_to_, &, target, false, false) KC_IN_ORDER3(sub_mul_to_, &, target, true, false)
KC_IN_ORDER2(shl_, shl, KC_VALUE) KC_IN_ORDER2(shr_, shr, KC_VALUE)
KC_IN_ORDER2(shl_to_, shl_to, &) KC_IN_ORDER2(shr_to_, shr_to, &)
#undef KC_VALUE

// A product that a local holds and nvcc fuses into every sum that reads it there (`float p = x * y;
// ... c + p` is one FFMA): the rewriter declares a `::kc::held_product<float> kc_held_N;` at the
// top of the function, computes the product as `::kc::hold_mul_{kc_held_N, x, y}()` (`p *= y` as
// `::kc::hold_mul_to_{kc_held_N, p, y}()`), which keeps its operands there, and gives each read
// that nvcc fuses as the operands `kc_held_N.kc_a , kc_held_N.kc_b` of the multiply-add written
// in its place (arith.py, ranks.py).
template <class kc_T> struct held_product { kc_T kc_a, kc_b; };
template <class kc_T, class kc_A, class kc_B> struct hold_mul_ {
    held_product<kc_T>& kc_h;
    kc_A kc_a;
    kc_B kc_b;
    constexpr kc_T operator()() { kc_h.kc_a = kc_T(kc_a); kc_h.kc_b = kc_T(kc_b); return kc_h.kc_a * kc_h.kc_b; }
};
template <class kc_T, class kc_A, class kc_B> hold_mul_(held_product<kc_T>&, kc_A, kc_B) -> hold_mul_<kc_T, kc_A, kc_B>;
template <class kc_T, class kc_P, class kc_B> struct hold_mul_to_ {
    held_product<kc_T>& kc_h;
    kc_P& kc_p;
    kc_B kc_b;
    constexpr kc_P& operator()() {
        kc_h.kc_b = kc_T(kc_b);   // C++17: the right side first
        kc_h.kc_a = kc_T(kc_p);
        return kc_p = kc_P(kc_h.kc_a * kc_h.kc_b);
    }
};
template <class kc_T, class kc_P, class kc_B> hold_mul_to_(held_product<kc_T>&, kc_P&, kc_B) -> hold_mul_to_<kc_T, kc_P, kc_B>;
#undef KC_IN_ORDER3
#undef KC_IN_ORDER2
}  // namespace kc
