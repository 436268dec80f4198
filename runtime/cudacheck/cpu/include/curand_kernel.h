// cuRAND's device API on the CPU runtime: the default XORWOW generator (curandState) and
// Philox4_32_10, each giving the GPU's sequence bit for bit for a (seed, subsequence,
// offset): curand_init, curand, curand4 (Philox), skipahead, skipahead_sequence, the uniform
// distributions, and the float normal and log-normal ones (Box-Muller, as cuRAND computes
// them, through the GPU's logf, sqrtf and __sincosf of kc_gpu_math.h). The double normal ones
// go through the C library's log, exp and sincospi, whose last bits differ from CUDA's now
// and then (README, Limitations). The algorithms are those cuRAND's documentation and the
// XORWOW and Philox papers (Marsaglia 2003; Salmon et al., SC'11) define.
#pragma once
#include "cuda_cpu.h"

namespace kc {
namespace rand {

// ---- XORWOW: a 160-bit xorshift register and a Weyl sequence ------------------------------

// One step of the xorshift part, a linear map of the 160 bits v[0..4] over GF(2).
inline void xorshift_step(unsigned* v) {
    unsigned t = v[0] ^ (v[0] >> 2);
    v[0] = v[1];
    v[1] = v[2];
    v[2] = v[3];
    v[3] = v[4];
    v[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
}

// The jump tables are the generator's own memory, not the kernel's: checked mode does not
// instrument their arithmetic (128 squarings of a 160x160 bit matrix).
#define KC_RAND_UNCHECKED __attribute__((no_sanitize("thread", "bounds")))

// A linear map of the register, as its 160 columns (the images of the unit vectors).
struct Jump {
    unsigned col[160][5];
    KC_RAND_UNCHECKED void apply(unsigned* v) const {
        unsigned out[5] = {0, 0, 0, 0, 0};
        for (int i = 0; i < 160; ++i)
            if ((v[i / 32] >> (i % 32)) & 1u)
                for (int w = 0; w < 5; ++w) out[w] ^= col[i][w];
        for (int w = 0; w < 5; ++w) v[w] = out[w];
    }
    KC_RAND_UNCHECKED Jump squared() const {
        Jump r;
        for (int i = 0; i < 160; ++i) {
            for (int w = 0; w < 5; ++w) r.col[i][w] = col[i][w];
            apply(r.col[i]);
        }
        return r;
    }
};

// jumps[k]: 2^k steps, k < 64 (skipahead); jumps[64 + k]: 2^(67 + k) steps (a subsequence is
// 2^67 steps long). Made once per process, on the first curand_init.
KC_RAND_UNCHECKED inline const Jump* jumps() {
    static Jump* table = nullptr;
    if (table) return table;
    table = static_cast<Jump*>(malloc(sizeof(Jump) * 128));
    Jump step;
    for (int i = 0; i < 160; ++i) {
        for (int w = 0; w < 5; ++w) step.col[i][w] = 0;
        step.col[i][i / 32] = 1u << (i % 32);
        xorshift_step(step.col[i]);
    }
    Jump j = step;
    for (int k = 0; k < 64 + 67; ++k) {
        if (k < 64) table[k] = j;
        if (k >= 67) table[64 + k - 67] = j;
        if (k + 1 < 64 + 67) j = j.squared();
    }
    return table;
}
}  // namespace rand
}  // namespace kc

struct curandStateXORWOW {
    unsigned int d, v[5];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;

struct curandStatePhilox4_32_10 {
    uint4 ctr;
    uint4 output;
    uint2 key;
    unsigned int STATE;
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

inline void skipahead(unsigned long long n, curandStateXORWOW_t* s) {
    const kc::rand::Jump* j = kc::rand::jumps();
    s->d += unsigned(n) * 362437u;
    for (int k = 0; n; ++k, n >>= 1)
        if (n & 1u) j[k].apply(s->v);
}
inline void skipahead_sequence(unsigned long long n, curandStateXORWOW_t* s) {
    const kc::rand::Jump* j = kc::rand::jumps();
    for (int k = 0; n; ++k, n >>= 1)
        if (n & 1u) j[64 + k].apply(s->v);
}

inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                        curandStateXORWOW_t* s) {
    unsigned s0 = unsigned(seed) ^ 0xaad26b49u, s1 = unsigned(seed >> 32) ^ 0xf7dcefddu;
    unsigned t0 = 1099087573u * s0, t1 = 2591861531u * s1;
    s->d = 6615241u + t1 + t0;
    s->v[0] = 123456789u + t0;
    s->v[1] = 362436069u ^ t0;
    s->v[2] = 521288629u + t1;
    s->v[3] = 88675123u ^ t1;
    s->v[4] = 5783321u + t0;
    skipahead_sequence(subsequence, s);
    skipahead(offset, s);
    s->boxmuller_flag = s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
}

inline unsigned int curand(curandStateXORWOW_t* s) {
    kc::rand::xorshift_step(s->v);
    s->d += 362437u;
    return s->v[4] + s->d;
}

// ---- Philox4x32-10: a counter-based generator, four 32-bit outputs per counter --------------
namespace kc {
namespace rand {
inline uint4 philox_round(uint4 c, uint2 k) {
    unsigned long long p0 = 0xD2511F53ull * c.x, p1 = 0xCD9E8D57ull * c.z;
    return uint4{unsigned(p1 >> 32) ^ c.y ^ k.x, unsigned(p1), unsigned(p0 >> 32) ^ c.w ^ k.y, unsigned(p0)};
}
inline uint4 philox(uint4 c, uint2 k) {
    for (int r = 0; r < 10; ++r) {
        if (r) { k.x += 0x9E3779B9u; k.y += 0xBB67AE85u; }
        c = philox_round(c, k);
    }
    return c;
}
// The 128-bit counter plus n (its low 64 bits, x and y, carry into z and w).
inline void philox_add(curandStatePhilox4_32_10_t* s, unsigned long long n) {
    unsigned lo = unsigned(n), hi = unsigned(n >> 32);
    s->ctr.x += lo;
    if (s->ctr.x < lo) ++hi;
    s->ctr.y += hi;
    if (hi <= s->ctr.y) return;
    if (++s->ctr.z) return;
    ++s->ctr.w;
}
// The counter's high 64 bits (z and w), which number the subsequences, plus n.
inline void philox_add_hi(curandStatePhilox4_32_10_t* s, unsigned long long n) {
    unsigned lo = unsigned(n), hi = unsigned(n >> 32);
    s->ctr.z += lo;
    if (s->ctr.z < lo) ++hi;
    s->ctr.w += hi;
}
}  // namespace rand
}  // namespace kc

inline void skipahead(unsigned long long n, curandStatePhilox4_32_10_t* s) {
    s->STATE += unsigned(n & 3u);
    n /= 4;
    if (s->STATE > 3) {
        n += 1;
        s->STATE -= 4;
    }
    kc::rand::philox_add(s, n);
    s->output = kc::rand::philox(s->ctr, s->key);
}
inline void skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10_t* s) {
    kc::rand::philox_add_hi(s, n);
    s->output = kc::rand::philox(s->ctr, s->key);
}

inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                        curandStatePhilox4_32_10_t* s) {
    s->ctr = uint4{0, 0, 0, 0};
    s->key = uint2{unsigned(seed), unsigned(seed >> 32)};
    s->STATE = 0;
    s->boxmuller_flag = s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
    skipahead_sequence(subsequence, s);
    skipahead(offset, s);
}

inline unsigned int curand(curandStatePhilox4_32_10_t* s) {
    unsigned r = s->STATE == 0 ? s->output.x : s->STATE == 1 ? s->output.y : s->STATE == 2 ? s->output.z
                                                                                          : s->output.w;
    if (++s->STATE == 4) {
        kc::rand::philox_add(s, 1);
        s->output = kc::rand::philox(s->ctr, s->key);
        s->STATE = 0;
    }
    return r;
}

inline uint4 curand4(curandStatePhilox4_32_10_t* s) {
    uint4 t = s->output;
    kc::rand::philox_add(s, 1);
    s->output = kc::rand::philox(s->ctr, s->key);
    const uint4& o = s->output;
    switch (s->STATE) {
    case 1: return uint4{t.y, t.z, t.w, o.x};
    case 2: return uint4{t.z, t.w, o.x, o.y};
    case 3: return uint4{t.w, o.x, o.y, o.z};
    default: return t;
    }
}

// ---- distributions ----------------------------------------------------------------------------
namespace kc {
namespace rand {
// (0, 1]: x * 2^-32 + 2^-33, rounded once, as the GPU computes it (a fused multiply-add).
inline float uniform(unsigned x) { return __builtin_fmaf(float(x), 0x1p-32f, 0x1p-33f); }
inline double uniform_double(unsigned x, unsigned y) {
    unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << 21);
    return __builtin_fma(double(z), 0x1p-53, 0x1p-54);
}
inline float2 box_muller(unsigned x, unsigned y) {
    float u = uniform(x);
    float v = __builtin_fmaf(float(y), 0x1p-32f * 6.2831855f, 0x1p-32f * 6.2831855f / 2.0f);
    float r = sqrtf(kc::gpumath::mul_(-2.0f, kc::gpu_logf(u))), sine, cosine;
    __sincosf(v, &sine, &cosine);
    return float2{kc::gpumath::mul_(sine, r), kc::gpumath::mul_(cosine, r)};
}
inline double2 box_muller_double(unsigned x0, unsigned x1, unsigned y0, unsigned y1) {
    unsigned long long zx = (unsigned long long)x0 ^ ((unsigned long long)x1 << 21);
    unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << 21);
    double u = __builtin_fma(double(zx), 0x1p-53, 0x1p-54);
    double v = __builtin_fma(double(zy), 0x1p-52, 0x1p-53);
    double r = sqrt(-2.0 * log(u)), sine, cosine;
    sincospi(v, &sine, &cosine);
    return double2{sine * r, cosine * r};
}
}  // namespace rand
}  // namespace kc

template <class S> inline float curand_uniform(S* s) { return kc::rand::uniform(curand(s)); }
// XORWOW's double takes 53 bits of two values; Philox's, one value: x * 2^-32 + 2^-32.
inline double curand_uniform_double(curandStateXORWOW_t* s) {
    unsigned x = curand(s), y = curand(s);
    return kc::rand::uniform_double(x, y);
}
inline double curand_uniform_double(curandStatePhilox4_32_10_t* s) { return __builtin_fma(double(curand(s)), 0x1p-32, 0x1p-32); }
inline float4 curand_uniform4(curandStatePhilox4_32_10_t* s) {
    uint4 x = curand4(s);
    return float4{kc::rand::uniform(x.x), kc::rand::uniform(x.y), kc::rand::uniform(x.z), kc::rand::uniform(x.w)};
}
template <class S> inline float2 curand_normal2(S* s) {
    unsigned x = curand(s), y = curand(s);
    return kc::rand::box_muller(x, y);
}
namespace kc {
namespace rand {
// One value of a Box-Muller pair, f applied: the pair is made (make()) when the state's flag
// is not `which` (1: normal, 2: log-normal), its second value kept for the next call.
template <class T, class Make, class F> inline T pair_value(int& flag, T& extra, int which, Make make, F f) {
    if (flag != which) {
        auto v = make();
        extra = f(v.y);
        flag = which;
        return f(v.x);
    }
    flag = 0;
    return extra;
}
}  // namespace rand
}  // namespace kc

template <class S> inline float curand_normal(S* s) {
    return kc::rand::pair_value(s->boxmuller_flag, s->boxmuller_extra, 1, [&] { return curand_normal2(s); },
                                [](float v) { return v; });
}
inline float4 curand_normal4(curandStatePhilox4_32_10_t* s) {
    uint4 x = curand4(s);
    float2 a = kc::rand::box_muller(x.x, x.y), b = kc::rand::box_muller(x.z, x.w);
    return float4{a.x, a.y, b.x, b.y};
}
inline double2 curand_normal2_double(curandStateXORWOW_t* s) {
    unsigned x0 = curand(s), x1 = curand(s), y0 = curand(s), y1 = curand(s);
    return kc::rand::box_muller_double(x0, x1, y0, y1);
}
inline double2 curand_normal2_double(curandStatePhilox4_32_10_t* s) {
    uint4 x = curand4(s);
    return kc::rand::box_muller_double(x.x, x.y, x.z, x.w);
}
template <class S> inline double curand_normal_double(S* s) {
    return kc::rand::pair_value(s->boxmuller_flag_double, s->boxmuller_extra_double, 1,
                                [&] { return curand_normal2_double(s); }, [](double v) { return v; });
}
// A log-normal pair is kept apart from a normal one (its own flag): a curand_normal after a
// curand_log_normal starts a new pair, as in cuRAND.
template <class S> inline float curand_log_normal(S* s, float mean, float stddev) {
    return kc::rand::pair_value(s->boxmuller_flag, s->boxmuller_extra, 2, [&] { return curand_normal2(s); },
                                [&](float v) { return kc::gpu_expf(kc::gpumath::fma_(stddev, v, mean)); });
}
template <class S> inline double curand_log_normal_double(S* s, double mean, double stddev) {
    return kc::rand::pair_value(s->boxmuller_flag_double, s->boxmuller_extra_double, 2,
                                [&] { return curand_normal2_double(s); }, [&](double v) { return exp(mean + stddev * v); });
}

// MTGP32's state is made by the host library (curand_mtgp32_host.h), which the CPU runtime does
// not provide: declared, never defined, so that a kernel taking one parses, and its draws are
// unavailable, so that the kernel is refused by the type's name (the front end reads the quoted
// name in clang's message: runtime/cudacheck/frontend/cpu_build.py, UNSUPPORTED).
struct curandStateMtgp32;
typedef struct curandStateMtgp32 curandStateMtgp32_t;
#define KC_MTGP32_REFUSED __attribute__((unavailable("'curandStateMtgp32_t' is not provided")))
KC_MTGP32_REFUSED unsigned int curand(curandStateMtgp32_t*);
KC_MTGP32_REFUSED float curand_uniform(curandStateMtgp32_t*);
KC_MTGP32_REFUSED double curand_uniform_double(curandStateMtgp32_t*);
KC_MTGP32_REFUSED float curand_normal(curandStateMtgp32_t*);
KC_MTGP32_REFUSED double curand_normal_double(curandStateMtgp32_t*);
KC_MTGP32_REFUSED float curand_log_normal(curandStateMtgp32_t*, float, float);
KC_MTGP32_REFUSED double curand_log_normal_double(curandStateMtgp32_t*, double, double);
#undef KC_MTGP32_REFUSED

// The other generators, which use the distributions above.
#include "curand_mrg32k3a.h"
#include "curand_sobol.h"
