// <mma.h> on the CPU runtime: nvcuda::wmma, the warp-level matrix fragments of the CUDA C++
// Programming Guide ("Warp Matrix Functions"), with the fragments and overloads of CUDA's own
// header for the shapes and types below, and the same warp-collective rules.
//
//   matrix_a / matrix_b          accumulator          shapes (m x n x k)
//   __half (row_/col_major)      float or __half      16x16x16, 32x8x16, 8x32x16
//   __nv_bfloat16                float                16x16x16, 32x8x16, 8x32x16
//   precision::tf32 (float)      float                16x16x8
//
// (CUDA's integer, sub-byte and double fragments are not provided: using one is a compile
// error that says so.) num_elements, per thread, is CUDA's: a 16x16 __half matrix_a holds 16
// (each element twice in the warp), a __nv_bfloat16 one 8, a tf32 16x8 one 4, an accumulator 8.
//
// Which elements a thread holds is unspecified in CUDA; here element x[i] of lane L is
// element f = (L + 32 * (i % S) + (32 / C) * (i / S)) mod T of the tile, counted row by row
// (row f / cols, column f % cols of the tile as the fragment's role sees it: matrix_a is
// m x k, matrix_b k x n, an accumulator m x n), where T = rows * cols, S = T / 32 and
// C = num_elements / S is how many lanes hold each element (C = 1 but for __half matrix_a
// and matrix_b). So an element-wise operation on x[i] (scaling, a ReLU, __float_to_tf32)
// applies to every element, as on a GPU; a kernel must not rely on the mapping itself.
//
// Warp-collective semantics, as the Guide states them: load_matrix_sync, store_matrix_sync
// and mma_sync wait until all 32 lanes of the warp arrive at the same call, with the same
// pointer, leading dimension (ldm) and layout; the pointer must be 256-bit (32-byte) aligned
// and ldm a multiple of 16 bytes (8 __half or __nv_bfloat16 elements, 4 floats).
// fill_fragment is not collective. Checked mode reports a call that only part of a warp
// reaches or that lanes reach with different arguments (WarpCollectiveError), a misaligned
// pointer (MisalignedAddressError; plain mode too: a GPU faults), an ldm that is not a
// multiple of 16 bytes (LeadingDimensionError) and any element of a tile outside the array
// its pointer points into (OutOfBoundsError), naming the line of the call. In plain mode an
// operation not all 32 lanes reach is not performed.
//
// Arithmetic. mma_sync computes each element of d as c plus the k products of a's row and
// b's column, summed in double (every product of two 16-bit or TF32 values is exact there)
// and rounded once to d's type, round to nearest even. A GPU's tensor cores add in their own
// order and precision, so a result agrees with a GPU's within float rounding, not bit for
// bit. A tf32 element is read as the tensor core reads a 32-bit register: its sign, exponent
// and 10 upper mantissa bits; the 13 lower bits are ignored (truncated), which is why the
// Guide has every element rounded with __float_to_tf32 (cvt.rna.tf32.f32: to nearest, ties
// away from zero) before mma_sync.
//
// As CUDA's <mma.h>, it includes <cuda_fp16.h> and <cuda_bf16.h>.
#pragma once
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "../src/kc_warp.h"

// The functions that run each lane's part: their own accesses are reported at the line of
// the wmma call (kc::tile_access), not instrumented at this header's lines.
#define KC_WMMA_PART static __attribute__((no_sanitize_thread, noinline))

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}

enum layout_t { mem_row_major, mem_col_major };

template <typename T>
struct helper_traits {
    typedef T element_type;
    typedef T storage_element_type;
    typedef T fill_argument_type;
};
template <>
struct helper_traits<precision::tf32> {
    typedef precision::tf32 element_type;
    typedef float storage_element_type;
    typedef float fill_argument_type;
};

template <typename T, int size, int packed_size = size>
struct __align__(8) __frag_base {
    enum { num_elements = size };
    enum { num_storage_elements = packed_size };
    typedef T element_type;
    typedef typename helper_traits<T>::storage_element_type storage_element_type;
    storage_element_type x[num_storage_elements];
};

// Fills this thread's elements (not a collective operation: each thread fills its own).
template <typename FragEleType, int size, int packed_size>
inline void fill_fragment(__frag_base<FragEleType, size, packed_size>& f,
                          const typename helper_traits<FragEleType>::fill_argument_type& in) {
    for (int i = 0; i < f.num_storage_elements; i++) f.x[i] = in;
}

template <typename T> struct kc_false { static constexpr bool value = false; };

template <typename Use, int m, int n, int k, typename T, typename Layout = void>
class fragment {
    static_assert(kc_false<T>::value,
                  "no such wmma fragment on the CPU runtime: it provides __half (float or __half accumulators) and "
                  "__nv_bfloat16 (float accumulators) at 16x16x16, 32x8x16 and 8x32x16, and precision::tf32 at "
                  "16x16x8; CUDA's integer, sub-byte and double fragments run on a GPU only (backend='gpu')");
};

#define KC_FRAG_AB(M, N, K, T, EA, EB)                                                            \
    template <> class fragment<matrix_a, M, N, K, T, row_major> : public __frag_base<T, EA> {};   \
    template <> class fragment<matrix_a, M, N, K, T, col_major> : public __frag_base<T, EA> {};   \
    template <> class fragment<matrix_b, M, N, K, T, row_major> : public __frag_base<T, EB> {};   \
    template <> class fragment<matrix_b, M, N, K, T, col_major> : public __frag_base<T, EB> {};
#define KC_FRAG_C(M, N, K, T) template <> class fragment<accumulator, M, N, K, T> : public __frag_base<T, 8> {};
KC_FRAG_AB(16, 16, 16, __half, 16, 16)
KC_FRAG_AB(32, 8, 16, __half, 16, 16)
KC_FRAG_AB(8, 32, 16, __half, 16, 16)
KC_FRAG_AB(16, 16, 16, __nv_bfloat16, 8, 8)
KC_FRAG_AB(32, 8, 16, __nv_bfloat16, 16, 4)
KC_FRAG_AB(8, 32, 16, __nv_bfloat16, 4, 16)
KC_FRAG_AB(16, 16, 8, precision::tf32, 4, 4)
KC_FRAG_C(16, 16, 16, __half)
KC_FRAG_C(16, 16, 16, float)
KC_FRAG_C(32, 8, 16, __half)
KC_FRAG_C(32, 8, 16, float)
KC_FRAG_C(8, 32, 16, __half)
KC_FRAG_C(8, 32, 16, float)
KC_FRAG_C(16, 16, 8, float)
#undef KC_FRAG_AB
#undef KC_FRAG_C

// float -> TF32, kept in a float: cvt.rna.tf32.f32, round to nearest with ties away from zero
// on the 13 mantissa bits TF32 drops (an overflow becomes infinity); infinities and NaN as
// they are.
inline float __float_to_tf32(float in) {
    unsigned b = __float_as_uint(in);
    if ((b & 0x7f800000u) == 0x7f800000u) return in;
    return __uint_as_float((b + 0x1000u) & 0xffffe000u);
}

}  // namespace wmma
}  // namespace nvcuda

namespace kc {
namespace wmma_impl {
using namespace nvcuda::wmma;

template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };

// A fragment type's tile and mapping (see the top of this file).
template <class Frag> struct info;
template <class Use, int m, int n, int k, class T, class L>
struct info<fragment<Use, m, n, k, T, L>> {
    typedef fragment<Use, m, n, k, T, L> frag;
    typedef typename helper_traits<T>::storage_element_type stored;   // in memory and in x[]
    static constexpr int rows = same<Use, matrix_b>::value ? k : m;
    static constexpr int cols = same<Use, matrix_a>::value ? k : n;
    static constexpr int total = rows * cols, E = frag::num_elements, slots = total / 32, copies = E / slots;
    static_assert(slots * 32 == total && copies * slots == E, "fragment mapping");
    static constexpr bool tf32 = same<T, precision::tf32>::value;
    static constexpr bool col_major_layout = same<L, col_major>::value;
    static int flat(int lane, int i) { return (lane + 32 * (i % slots) + (32 / copies) * (i / slots)) % total; }
};

// An element's value as the tensor core reads it, exactly.
inline double in_value(__half h) { return kc::lowp::value(h); }
inline double in_value(__nv_bfloat16 h) { return kc::lowp::value(h); }
inline double in_value(float f) { return f; }
inline double tf32_value(float f) {   // the upper 19 bits of the register
    unsigned b = __float_as_uint(f);
    if ((b & 0x7f800000u) == 0x7f800000u) return f;
    return __uint_as_float(b & 0xffffe000u);
}
template <class T> inline T out_value(double v);
template <> inline float out_value<float>(double v) { return float(v); }
template <> inline __half out_value<__half>(double v) { return kc::lowp::rounded<__half>(v); }

// The rules every load and store obeys: a 32-byte aligned pointer (a GPU faults otherwise)
// and, in checked mode, ldm a multiple of 16 bytes (undefined on a GPU).
template <class S>
inline void check_operands(const Collective* c) {
    uintptr_t p = uintptr_t(c->key[0]);
    if (p % 32) operand_error("misaligned_wmma", c->what, reinterpret_cast<const void*>(p), p % 32, 32, c->line);
#ifdef KC_CHECKED
    if ((c->key[1] * sizeof(S)) % 16)
        operand_error("ldm", c->what, reinterpret_cast<const void*>(p), c->key[1], 16 / sizeof(S), c->line);
#endif
}

// Lane `lane`'s elements of the tile at key[0] (ldm key[1], column-major if key[2]).
template <class Frag, bool Store>
KC_WMMA_PART void transfer(Collective* const* lanes, unsigned lane) {
    typedef info<Frag> I;
    typedef typename I::stored S;
    Collective* c = lanes[lane];
    check_operands<S>(c);
    Frag& f = *static_cast<Frag*>(c->operand[0]);
    char* base = reinterpret_cast<char*>(uintptr_t(c->key[0]));
    uint64_t ldm = c->key[1];
    bool col = c->key[2] != 0;
    for (int i = 0; i < I::E; ++i) {
        int e = I::flat(int(lane), i), r = e / I::cols, q = e % I::cols;
        char* addr = base + (col ? uint64_t(q) * ldm + uint64_t(r) : uint64_t(r) * ldm + uint64_t(q)) * sizeof(S);
#ifdef KC_CHECKED
        tile_access(c, addr, sizeof(S), Store, I::rows, I::cols, r, q);
#endif
        if (Store) *reinterpret_cast<S*>(addr) = f.x[i];
        else f.x[i] = *reinterpret_cast<const S*>(addr);
    }
}

template <class FD, class FA, class FB, class FC>
KC_WMMA_PART void multiply(Collective* const* lanes, unsigned lane) {
    typedef info<FD> D;
    typedef info<FA> A;
    typedef info<FB> B;
    Collective* me = lanes[lane];
    FD& d = *static_cast<FD*>(me->operand[0]);
    const FC& c = *static_cast<const FC*>(me->operand[3]);
    const int K = A::cols;
    for (int i = 0; i < D::E; ++i) {
        int e = D::flat(int(lane), i), r = e / D::cols, q = e % D::cols;
        double sum = in_value(c.x[i]);
        for (int kk = 0; kk < K; ++kk) {
            int ea = r * K + kk, eb = kk * B::cols + q;   // held by lane e % 32 as its x[e / 32]
            const FA& a = *static_cast<const FA*>(lanes[ea % 32]->operand[1]);
            const FB& b = *static_cast<const FB*>(lanes[eb % 32]->operand[2]);
            double av = A::tf32 ? tf32_value(a.x[ea / 32]) : in_value(a.x[ea / 32]);
            double bv = B::tf32 ? tf32_value(b.x[eb / 32]) : in_value(b.x[eb / 32]);
            sum += av * bv;
        }
        d.x[i] = out_value<typename D::stored>(sum);
    }
}

inline Collective collective(CollectiveRun run, const char* what, const void* p, uint64_t ldm, uint64_t layout,
                             void* pc, int line) {
    Collective c{};
    c.run = run;
    c.what = what;
    c.key[0] = uint64_t(reinterpret_cast<uintptr_t>(p));
    c.key[1] = ldm;
    c.key[2] = layout;
    c.pc = pc;
    c.line = line;
    return c;
}

}  // namespace wmma_impl
}  // namespace kc

namespace nvcuda {
namespace wmma {

// Each is a warp-collective call (see the top of this file). `site`: the caller's line,
// filled in by the compiler; never pass it.
template <class Use, int m, int n, int k, class T, class L>
__attribute__((noinline)) void load_matrix_sync(fragment<Use, m, n, k, T, L>& a,
                                                const typename helper_traits<T>::storage_element_type* p,
                                                unsigned ldm, kc::Site site = kc::Site::here()) {
    static_assert(!kc::wmma_impl::same<L, void>::value,
                  "an accumulator fragment's load_matrix_sync takes a layout: (c, p, ldm, wmma::mem_row_major)");
    kc::Collective c = kc::wmma_impl::collective(&kc::wmma_impl::transfer<fragment<Use, m, n, k, T, L>, false>,
                                                 "wmma::load_matrix_sync", p, ldm,
                                                 kc::wmma_impl::same<L, col_major>::value, __builtin_return_address(0),
                                                 site.line);
    c.operand[0] = &a;
    kc::warp_collective(&c);
}

template <int m, int n, int k, class T>
__attribute__((noinline)) void load_matrix_sync(fragment<accumulator, m, n, k, T>& a, const T* p, unsigned ldm,
                                                layout_t layout, kc::Site site = kc::Site::here()) {
    kc::Collective c = kc::wmma_impl::collective(&kc::wmma_impl::transfer<fragment<accumulator, m, n, k, T>, false>,
                                                 "wmma::load_matrix_sync", p, ldm, layout == mem_col_major,
                                                 __builtin_return_address(0), site.line);
    c.operand[0] = &a;
    kc::warp_collective(&c);
}

template <int m, int n, int k, class T>
__attribute__((noinline)) void store_matrix_sync(T* p, const fragment<accumulator, m, n, k, T>& a, unsigned ldm,
                                                 layout_t layout, kc::Site site = kc::Site::here()) {
    kc::Collective c = kc::wmma_impl::collective(&kc::wmma_impl::transfer<fragment<accumulator, m, n, k, T>, true>,
                                                 "wmma::store_matrix_sync", p, ldm, layout == mem_col_major,
                                                 __builtin_return_address(0), site.line);
    c.operand[0] = const_cast<fragment<accumulator, m, n, k, T>*>(&a);
    kc::warp_collective(&c);
}

template <int m, int n, int k, class TD, class TAB, class LA, class LB, class TC>
__attribute__((noinline)) void mma_sync(fragment<accumulator, m, n, k, TD>& d,
                                        const fragment<matrix_a, m, n, k, TAB, LA>& a,
                                        const fragment<matrix_b, m, n, k, TAB, LB>& b,
                                        const fragment<accumulator, m, n, k, TC>& c,
                                        kc::Site site = kc::Site::here()) {
    using kc::wmma_impl::same;
    static_assert(same<TAB, __half>::value || (same<TD, float>::value && same<TC, float>::value),
                  "__nv_bfloat16 and precision::tf32 fragments accumulate in float only");
    typedef fragment<accumulator, m, n, k, TD> FD;
    typedef fragment<matrix_a, m, n, k, TAB, LA> FA;
    typedef fragment<matrix_b, m, n, k, TAB, LB> FB;
    typedef fragment<accumulator, m, n, k, TC> FC;
    kc::Collective op = kc::wmma_impl::collective(&kc::wmma_impl::multiply<FD, FA, FB, FC>, "wmma::mma_sync", nullptr,
                                                  0, 0, __builtin_return_address(0), site.line);
    op.operand[0] = &d;
    op.operand[1] = const_cast<FA*>(&a);
    op.operand[2] = const_cast<FB*>(&b);
    op.operand[3] = const_cast<FC*>(&c);
    kc::warp_collective(&op);
}

}  // namespace wmma
}  // namespace nvcuda

#undef KC_WMMA_PART
