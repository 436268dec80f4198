// cuRAND's Sobol quasi-random generators on the CPU runtime (curandStateSobol32_t,
// curandStateScrambledSobol32_t, curandStateSobol64_t, curandStateScrambledSobol64_t),
// included by curand_kernel.h after its distributions. A state is one dimension of a Sobol
// sequence: its point i is the xor of the caller's direction vectors picked by the bits of
// i's Gray code (Bratley and Fox's construction; the scrambled ones start from the xor of a
// scramble constant), so that point i + 1 is point i xored with one vector, the one of the
// lowest zero bit of i. The direction vectors come from the caller, as on a GPU (where the
// host library's curandGetDirectionVectors32/64 gives them).
#pragma once

typedef unsigned int curandDirectionVectors32_t[32];
typedef unsigned long long curandDirectionVectors64_t[64];

// Each state keeps its scramble constant (0 for the plain ones), from which a skipahead starts again.
#define KC_SOBOL_STATE(NAME, T, BITS)                                                               \
    struct NAME {                                                                                   \
        T i, x, c;                                                                                  \
        T direction_vectors[BITS];                                                                  \
    };                                                                                              \
    typedef struct NAME NAME##_t;
KC_SOBOL_STATE(curandStateSobol32, unsigned int, 32)
KC_SOBOL_STATE(curandStateScrambledSobol32, unsigned int, 32)
KC_SOBOL_STATE(curandStateSobol64, unsigned long long, 64)
KC_SOBOL_STATE(curandStateScrambledSobol64, unsigned long long, 64)
#undef KC_SOBOL_STATE

namespace kc {
namespace rand {
template <class S> struct SobolWord;
template <> struct SobolWord<curandStateSobol32_t> { typedef unsigned int type; };
template <> struct SobolWord<curandStateScrambledSobol32_t> { typedef unsigned int type; };
template <> struct SobolWord<curandStateSobol64_t> { typedef unsigned long long type; };
template <> struct SobolWord<curandStateScrambledSobol64_t> { typedef unsigned long long type; };

// Point s->i: the constant xored with the vectors of the set bits of i's Gray code.
template <class S> inline void sobol_seek(S* s) {
    typename SobolWord<S>::type g = s->i ^ (s->i >> 1), x = s->c;
    for (int k = 0; g; ++k, g >>= 1)
        if (g & 1u) x ^= s->direction_vectors[k];
    s->x = x;
}
template <class S, class V>
inline void sobol_init(S* s, const V* vectors, typename SobolWord<S>::type scramble, typename SobolWord<S>::type offset) {
    for (int k = 0; k < int(8 * sizeof(V)); ++k) s->direction_vectors[k] = vectors[k];
    s->c = scramble;
    s->i = offset;
    sobol_seek(s);
}
// This point's value; then the next point, one vector away: the one of i's lowest zero bit,
// or the top one where i is all ones and wraps to 0 (so that no vector past the last is read).
template <class S> inline typename SobolWord<S>::type sobol_next(S* s) {
    typedef typename SobolWord<S>::type T;
    T r = s->x, zeros = ~s->i;
    s->x ^= s->direction_vectors[__builtin_ctzll((unsigned long long)zeros | 1ull << (8 * sizeof(T) - 1))];
    ++s->i;
    return r;
}
}  // namespace rand
}  // namespace kc

inline void curand_init(curandDirectionVectors32_t v, unsigned int offset, curandStateSobol32_t* s) {
    kc::rand::sobol_init(s, v, 0u, offset);
}
inline void curand_init(curandDirectionVectors32_t v, unsigned int scramble_c, unsigned int offset,
                        curandStateScrambledSobol32_t* s) {
    kc::rand::sobol_init(s, v, scramble_c, offset);
}
inline void curand_init(curandDirectionVectors64_t v, unsigned long long offset, curandStateSobol64_t* s) {
    kc::rand::sobol_init(s, v, 0ull, offset);
}
inline void curand_init(curandDirectionVectors64_t v, unsigned long long scramble_c, unsigned long long offset,
                        curandStateScrambledSobol64_t* s) {
    kc::rand::sobol_init(s, v, scramble_c, offset);
}

namespace kc {
namespace rand {
// The uniform and normal values of a 32-bit point; a 64-bit one gives its high 32 bits to the
// float ones and 53 bits to the double ones.
inline float sobol_uniform(unsigned x) { return uniform(x); }
inline float sobol_uniform(unsigned long long x) { return uniform(unsigned(x >> 32)); }
// A 32-bit point's double is x * 2^-32 + 2^-32 (as Philox's), measured on an H100.
inline double sobol_uniform_double(unsigned x) { return __builtin_fma(double(x), 0x1p-32, 0x1p-32); }
inline double sobol_uniform_double(unsigned long long x) { return __builtin_fma(double(x >> 11), 0x1p-53, 0x1p-54); }
// The inverse of the normal distribution at the point's uniform value p, -sqrt(2) erfcinv(2p),
// from its nearer tail (the upper half mirrored, the sign flipped) so that none of p's
// precision is lost near 1.
inline float normal_icdf(unsigned x) {
    float sign = -1.4142135f;
    if (x >= 0x80000000u) x = ~x, sign = -sign;
    return kc::gpumath::mul_(sign, erfcinvf(2.0f * uniform(x)));
}
inline float normal_icdf(unsigned long long x) { return normal_icdf(unsigned(x >> 32)); }
inline double normal_icdf_double(unsigned x) {
    double sign = -1.4142135623730951;
    if (x >= 0x80000000u) x = ~x, sign = -sign;
    return sign * erfcinv(2.0 * (double(x) * 0x1p-32 + 0x1p-33));
}
inline double normal_icdf_double(unsigned long long x) {
    double sign = -1.4142135623730951;
    if (x >= 0x8000000000000000ull) x = ~x, sign = -sign;
    return sign * erfcinv(2.0 * sobol_uniform_double(x));
}
}  // namespace rand
}  // namespace kc

// curand_normal2 pairs two draws of one state (Box-Muller), which cuRAND does not define for a
// quasi-random state, whose draws are points of one dimension: deleted, as NVRTC refuses it.
#define KC_SOBOL_API(S, T)                                                                          \
    inline T curand(S* s) { return kc::rand::sobol_next(s); }                                       \
    inline void skipahead(T n, S* s) {                                                              \
        s->i += n;                                                                                  \
        kc::rand::sobol_seek(s);                                                                    \
    }                                                                                               \
    inline float curand_uniform(S* s) { return kc::rand::sobol_uniform(curand(s)); }                \
    inline double curand_uniform_double(S* s) { return kc::rand::sobol_uniform_double(curand(s)); } \
    inline float curand_normal(S* s) { return kc::rand::normal_icdf(curand(s)); }                   \
    inline double curand_normal_double(S* s) { return kc::rand::normal_icdf_double(curand(s)); }    \
    inline float curand_log_normal(S* s, float mean, float stddev) {                                \
        return kc::gpu_expf(kc::gpumath::fma_(stddev, curand_normal(s), mean));                     \
    }                                                                                               \
    inline double curand_log_normal_double(S* s, double mean, double stddev) {                      \
        return exp(mean + stddev * curand_normal_double(s));                                        \
    }                                                                                               \
    float2 curand_normal2(S* s) = delete;
KC_SOBOL_API(curandStateSobol32_t, unsigned int)
KC_SOBOL_API(curandStateScrambledSobol32_t, unsigned int)
KC_SOBOL_API(curandStateSobol64_t, unsigned long long)
KC_SOBOL_API(curandStateScrambledSobol64_t, unsigned long long)
#undef KC_SOBOL_API
