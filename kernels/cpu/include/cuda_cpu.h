// The CUDA built-ins a kernel sees on the CPU runtime.
//
// The generated translation unit is: this header, then the kernel's unchanged source
// (under #line, so compiler messages name the student's lines), then one small launch
// stub per kernel. Keywords that only steer nvcc (__global__, __launch_bounds__, ...)
// expand to nothing or to their C++ meaning; __shared__ becomes `static`, which is
// shared by every fiber of a block because one worker process runs one block at a time.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "kc_fiber.h"

// ---- dim3, uint3 and the vector types ------------------------------------------------
struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// CUDA's alignments: 2-vectors of 4-byte types align to 8, 4-vectors to 16, 3-vectors
// to their element; make_T builds one.
#define KC_VEC1(T, B)                                                                  \
    struct T##1 { B x; };                                                              \
    inline T##1 make_##T##1(B x) { return T##1{x}; }
#define KC_VEC2(T, B, A)                                                               \
    struct alignas(A) T##2 { B x, y; };                                                \
    inline T##2 make_##T##2(B x, B y) { return T##2{x, y}; }
#define KC_VEC3(T, B)                                                                  \
    struct T##3 { B x, y, z; };                                                        \
    inline T##3 make_##T##3(B x, B y, B z) { return T##3{x, y, z}; }
#define KC_VEC4(T, B, A)                                                               \
    struct alignas(A) T##4 { B x, y, z, w; };                                          \
    inline T##4 make_##T##4(B x, B y, B z, B w) { return T##4{x, y, z, w}; }
#define KC_VECS(T, B, A2, A4) KC_VEC1(T, B) KC_VEC2(T, B, A2) KC_VEC3(T, B) KC_VEC4(T, B, A4)
KC_VECS(char, signed char, 2, 4)
KC_VECS(uchar, unsigned char, 2, 4)
KC_VECS(short, short, 4, 8)
KC_VECS(ushort, unsigned short, 4, 8)
KC_VECS(int, int, 8, 16)
KC_VECS(float, float, 8, 16)
KC_VECS(long, long, 16, 16)
KC_VECS(ulong, unsigned long, 16, 16)
KC_VECS(longlong, long long, 16, 16)
KC_VECS(ulonglong, unsigned long long, 16, 16)
KC_VECS(double, double, 16, 16)
KC_VEC1(uint, unsigned int) KC_VEC2(uint, unsigned int, 8) KC_VEC4(uint, unsigned int, 16)
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
#undef KC_VEC1
#undef KC_VEC2
#undef KC_VEC3
#undef KC_VEC4
#undef KC_VECS

// ---- qualifiers ----------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#ifndef KC_CHECKED
#define __shared__ static
#endif
#define warpSize 32

// ---- where a fiber is: the runtime state the built-ins read -------------------------
// The generated translation unit is the only one that includes this header, so the
// state is defined here; hidden visibility keeps each kernel library's copy its own.
namespace kc {
enum ThreadState : uint8_t { RUNNABLE, AT_SYNCTHREADS, AT_SYNCWARP, EXITED };
struct Thread {
    void* sp;              // saved stack pointer while switched out
    uint3 idx;             // threadIdx
    uint32_t linear;       // x + y*bx + z*bx*by: warp = linear / 32
    uint32_t pos;          // place in the schedule's order
    uint8_t state;
    uint32_t warp_mask;    // mask of the __syncwarp it waits at
    int line;              // source line of the barrier it waits at
    int exit_line;         // checked mode: the `return` it left by (0: the kernel's end)
    uint32_t seq;          // checked mode: its shared accesses so far in this barrier interval
};
Thread* cur;               // the fiber running now
uint3 block_idx;
dim3 block_dim, grid_dim;
unsigned char* dyn_smem;   // extern __shared__ storage of this block
void syncthreads(int line);
void syncwarp(unsigned mask, int line);
[[noreturn]] void assert_fail(const char* expr, int line);
}  // namespace kc

#define threadIdx (static_cast<const uint3&>(::kc::cur->idx))
#define blockIdx (static_cast<const uint3&>(::kc::block_idx))
#define blockDim (static_cast<const dim3&>(::kc::block_dim))
#define gridDim (static_cast<const dim3&>(::kc::grid_dim))

#define __syncthreads() ::kc::syncthreads(__LINE__)
#define __syncwarp(...) ::kc::syncwarp(::kc::warp_mask_arg(__VA_ARGS__), __LINE__)
namespace kc {
constexpr unsigned warp_mask_arg() { return 0xffffffffu; }
constexpr unsigned warp_mask_arg(unsigned m) { return m; }
}  // namespace kc

// Within a worker process fibers never run at once, and other workers only share global
// memory, so the fences need only stop the compiler from reordering.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }

#undef assert
#define assert(e) ((e) ? (void)0 : ::kc::assert_fail(#e, __LINE__))
#define __trap() ::kc::assert_fail("__trap()", __LINE__)

// extern __shared__ T name[]; is rewritten (on its own line) to
// `static ::kc::DynamicShared<T> name;`, a view of this block's dynamic shared memory.
namespace kc {
template <class T>
struct DynamicShared {
    operator T*() const { return reinterpret_cast<T*>(dyn_smem); }
    T& operator[](size_t i) const { return reinterpret_cast<T*>(dyn_smem)[i]; }
};
}  // namespace kc

// ---- atomics: real atomics, since workers share global memory ------------------------
// The value parameters are not deduced (type_identity), so atomicAdd(float*, 1.0)
// converts the 1.0 as CUDA's overloads do.
template <class T> using kc_same = std::type_identity_t<T>;
template <class T> inline T atomicAdd(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> inline T atomicSub(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).fetch_sub(v); }
template <class T> inline T atomicExch(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T> inline T atomicAnd(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).fetch_and(v); }
template <class T> inline T atomicOr(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> inline T atomicXor(T* p, kc_same<T> v) { return std::atomic_ref<T>(*p).fetch_xor(v); }
template <class T> inline T atomicCAS(T* p, kc_same<T> expected, kc_same<T> desired) {
    std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
    return expected;
}
template <class T> inline T atomicMax(T* p, kc_same<T> v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (old < v && !a.compare_exchange_weak(old, v)) {}
    return old;
}
template <class T> inline T atomicMin(T* p, kc_same<T> v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (v < old && !a.compare_exchange_weak(old, v)) {}
    return old;
}

// ---- min, max and the float intrinsics ----------------------------------------------
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

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
template <class T> inline T __ldg(const T* p) { return *p; }
