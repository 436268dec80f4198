// cuRAND's MRG32k3a generator (curandStateMRG32k3a_t) on the CPU runtime, included by
// curand_kernel.h after its distributions. The algorithm is L'Ecuyer's combined multiple
// recursive generator MRG32k3a (Operations Research 47(1), 1999): two order-3 recurrences mod
// m1 = 2^32 - 209 and m2 = 2^32 - 22853, their difference mod m1 the output. A skip-ahead of n
// steps multiplies each state by its step matrix to the power n (mod its modulus), made from
// the powers 2^k of the matrix, built once per process.
#pragma once

namespace kc {
namespace rand {
constexpr unsigned long long kMrgM1 = 4294967087ull, kMrgM2 = 4294944443ull;

// The step of one recurrence as a matrix on the state (oldest value first), entries < m.
struct MrgMatrix {
    unsigned long long a[3][3];
    KC_RAND_UNCHECKED MrgMatrix times(const MrgMatrix& q, unsigned long long m) const {
        MrgMatrix r;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                unsigned __int128 sum = 0;   // three products of values < 2^32: no overflow
                for (int k = 0; k < 3; ++k) sum += (unsigned __int128)a[i][k] * q.a[k][j];
                r.a[i][j] = (unsigned long long)(sum % m);
            }
        return r;
    }
    KC_RAND_UNCHECKED void apply(unsigned* s, unsigned long long m) const {
        unsigned long long out[3];
        for (int i = 0; i < 3; ++i) {
            unsigned __int128 sum = 0;
            for (int k = 0; k < 3; ++k) sum += (unsigned __int128)a[i][k] * s[k];
            out[i] = (unsigned long long)(sum % m);
        }
        for (int i = 0; i < 3; ++i) s[i] = unsigned(out[i]);
    }
};

// power[k] of each recurrence: its step matrix to the power 2^k, k < 191 (an offset reaches
// 2^64 steps, a subsequence is 2^76 steps and a sequence 2^127, each counted in 64 bits).
struct MrgJumps {
    static constexpr int kPowers = 127 + 64;
    MrgMatrix one[kPowers], two[kPowers];
    KC_RAND_UNCHECKED MrgJumps() {
        one[0] = MrgMatrix{{{0, 1, 0}, {0, 0, 1}, {kMrgM1 - 810728, 1403580, 0}}};
        two[0] = MrgMatrix{{{0, 1, 0}, {0, 0, 1}, {kMrgM2 - 1370589, 0, 527612}}};
        for (int k = 1; k < kPowers; ++k) {
            one[k] = one[k - 1].times(one[k - 1], kMrgM1);
            two[k] = two[k - 1].times(two[k - 1], kMrgM2);
        }
    }
};
KC_RAND_UNCHECKED inline const MrgJumps& mrg_jumps() {
    static const MrgJumps table;
    return table;
}
}  // namespace rand
}  // namespace kc

struct curandStateMRG32k3a {
    unsigned int s1[3];
    unsigned int s2[3];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;

namespace kc {
namespace rand {
// n * 2^first steps ahead: the powers first + k of the set bits k of n.
KC_RAND_UNCHECKED inline void mrg_skip(curandStateMRG32k3a_t* s, unsigned long long n, int first) {
    const MrgJumps& j = mrg_jumps();
    for (int k = first; n; ++k, n >>= 1)
        if (n & 1u) {
            j.one[k].apply(s->s1, kMrgM1);
            j.two[k].apply(s->s2, kMrgM2);
        }
}
// One step of both recurrences; the combined value x - y mod m1, in [1, m1] (m1 for 0).
inline unsigned long long mrg_next(curandStateMRG32k3a_t* s) {
    long long x = (1403580ll * s->s1[1] - 810728ll * s->s1[0]) % (long long)kMrgM1;
    long long y = (527612ll * s->s2[2] - 1370589ll * s->s2[0]) % (long long)kMrgM2;
    if (x < 0) x += kMrgM1;
    if (y < 0) y += kMrgM2;
    s->s1[0] = s->s1[1], s->s1[1] = s->s1[2], s->s1[2] = unsigned(x);
    s->s2[0] = s->s2[1], s->s2[1] = s->s2[2], s->s2[2] = unsigned(y);
    return x > y ? x - y : x - y + kMrgM1;
}
}  // namespace rand
}  // namespace kc

inline void skipahead(unsigned long long n, curandStateMRG32k3a_t* s) { kc::rand::mrg_skip(s, n, 0); }
inline void skipahead_subsequence(unsigned long long n, curandStateMRG32k3a_t* s) { kc::rand::mrg_skip(s, n, 76); }
inline void skipahead_sequence(unsigned long long n, curandStateMRG32k3a_t* s) { kc::rand::mrg_skip(s, n, 127); }

// Every word 12345, multiplied (mod its modulus) by the seed's halves, each xored with a mask,
// unless the seed is 0; then the subsequence (2^76 steps each) and the offset.
inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                        curandStateMRG32k3a_t* s) {
    for (int i = 0; i < 3; ++i) s->s1[i] = s->s2[i] = 12345u;
    if (seed) {
        unsigned long long lo = unsigned(seed) ^ 0x55555555u, hi = unsigned(seed >> 32) ^ 0xAAAAAAAAu;
        const unsigned long long f1[3] = {lo, hi, lo}, f2[3] = {hi, lo, hi};
        for (int i = 0; i < 3; ++i) {
            s->s1[i] = unsigned(f1[i] * 12345u % kc::rand::kMrgM1);
            s->s2[i] = unsigned(f2[i] * 12345u % kc::rand::kMrgM2);
        }
    }
    skipahead_subsequence(subsequence, s);
    skipahead(offset, s);
    s->boxmuller_flag = s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
}

namespace kc {
namespace rand {
// The combined value scaled into (0, 1]: z times the double nearest 1 / m1 (measured on an H100:
// z / m1, not z / (m1 + 1)).
inline double mrg_uniform(curandStateMRG32k3a_t* s) { return double(mrg_next(s)) * (1.0 / 4294967087.0); }
}  // namespace rand
}  // namespace kc

// 32 bits: z times 1.000000048662 (about 2^32 / m1, as an H100 computes it), truncated; z = m1
// gives just over 2^32 - 1, where the GPU's conversion saturates.
inline unsigned int curand(curandStateMRG32k3a_t* s) {
    double v = double(kc::rand::mrg_next(s)) * 1.000000048662;
    return v >= 4294967295.0 ? 4294967295u : unsigned(v);
}
inline float curand_uniform(curandStateMRG32k3a_t* s) { return float(kc::rand::mrg_uniform(s)); }
inline double curand_uniform_double(curandStateMRG32k3a_t* s) { return kc::rand::mrg_uniform(s); }

namespace kc {
namespace rand {
// Box-Muller on two uniform values of the generator itself (not on 32-bit words).
inline float2 mrg_box_muller(curandStateMRG32k3a_t* s) {
    float u = curand_uniform(s), v = kc::gpumath::mul_(curand_uniform(s), 6.2831855f);
    float r = sqrtf(kc::gpumath::mul_(-2.0f, kc::gpu_logf(u))), sine, cosine;
    __sincosf(v, &sine, &cosine);
    return float2{kc::gpumath::mul_(sine, r), kc::gpumath::mul_(cosine, r)};
}
inline double2 mrg_box_muller_double(curandStateMRG32k3a_t* s) {
    double u = curand_uniform_double(s), v = curand_uniform_double(s) * 2.0;
    double r = sqrt(-2.0 * log(u)), sine, cosine;
    sincospi(v, &sine, &cosine);
    return double2{sine * r, cosine * r};
}
}  // namespace rand
}  // namespace kc

inline float2 curand_normal2(curandStateMRG32k3a_t* s) { return kc::rand::mrg_box_muller(s); }
inline double2 curand_normal2_double(curandStateMRG32k3a_t* s) { return kc::rand::mrg_box_muller_double(s); }
