// The CUDA built-ins a kernel sees on the CPU runtime.
//
// The kernel's translation unit is: this header, then the kernel's source (under #line,
// so compiler messages name the student's lines, with the front end's few line-preserving
// edits: runtime/cudacheck/frontend/cpu_build.py), then one launch stub per kernel. Everything here is what the
// kernel may use; the runtime itself (fibers, scheduler, launcher) lives in its own units in
// ../src/ (kc_runtime.h lists them) and checked mode in kc_check_*.cpp (kc_check.h), separate
// translation units linked into the same library. The kc_*.h headers included below are ../src/'s
// too, included by their path: this folder, the only one on a kernel's include path, holds only
// the headers a kernel may include. Checked mode compiles this unit with g++'s ThreadSanitizer and bounds
// instrumentation, whose hooks the checks implement, so every load and store of the kernel
// is checked with the program's own types left alone.
//
// Only C headers here (and what C++'s <math.h> reads itself, below): runtime/cudacheck/frontend (libclang.py)
// parses this header with libclang before every cold compile, and more of the C++ library would triple the
// time it takes.
#pragma once
// Marks this header as read: the toolkit headers a host unit includes (cuda_runtime.h) read it once.
#define KC_CUDA_CPU_H 1
// A kernel's unit goes without C++17's special mathematical functions (std::beta,
// std::riemann_zeta: host code that nvcc refuses in a kernel and NVRTC does not declare), which
// C++'s <math.h> declares through <cmath> with 100 kB of templates: 3 of the 23 MB this header
// made precompiled, which g++ loads before every kernel's compile (logs/2026-12-07-suite-time-7.md).
// The rest of what <cmath> read for them stays: std::min, std::numeric_limits, the type traits,
// which a kernel may not use (NVRTC has no C++ library: frontend/nvrtc.py refuses them, declared
// or not) but may name in a template it never instantiates, as NVRTC accepts. A whole program's
// host code keeps all of <cmath>, as nvcc's host compiler gives it.
#if !defined(KC_PROGRAM) && defined(__cplusplus) && __has_include(<bits/c++config.h>)
#include <bits/c++config.h>
#undef _GLIBCXX_USE_STD_SPEC_FUNCS
#include <bits/stl_algobase.h>
#include <limits>
#endif
#include <math.h>
#include <stddef.h>
#include <stdint.h>
// NVRTC declares printf for device code without an include; nvcc gives a whole program's units
// math.h, stdlib.h and string.h but not stdio.h (nvcc 13 refuses printf there, host or device,
// until the program includes <cstdio>, <stdio.h> or a header that does).
#ifndef KC_PROGRAM
#include <stdio.h>
// NVRTC's namespace std holds std::move, std::forward, std::initializer_list and std::align_val_t
// with no header (the math.h above brings the first two; this small one the third): the rest of
// std a kernel names, NVRTC refuses, and so does the front end (nvrtc.check_std_names).
#include <initializer_list>
#endif
#include <stdlib.h>
#include <string.h>

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
#if defined(KC_FRONTEND) && defined(__CUDA__)
// For the front end's search for kernel launches in a whole program (frontend.find_launches):
// clang parses it as CUDA, where kernel<<<...>>>(...) is a call it understands.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __shared__ __attribute__((shared))
extern "C" int __cudaPushCallConfiguration(struct dim3, struct dim3, size_t = 0, void* = 0);
#elif defined(KC_FRONTEND)
// For the front end: clang keeps annotations in its AST, so it can tell a kernel, a shared
// array and a device variable apart with their full types.
#define __global__ __attribute__((annotate("kc_global")))
#define __device__ __attribute__((annotate("kc_device")))
#define __constant__ __attribute__((annotate("kc_constant")))
#define __managed__ __attribute__((annotate("kc_managed")))
#define __shared__ __attribute__((annotate("kc_shared")))
#else
// Never inlined into its launch stub (compiler.py: kc_body_<i>): checked mode's line table then
// reads a kernel's own lines as its own, not as calls from its signature's line.
#define __global__ __attribute__((noinline))
#define __device__
#define __constant__
#define __managed__
// One worker process runs one block at a time, so a static is shared by the fibers of a
// block and by nothing else. Static shared arrays share a section, followed by a guard
// (kc_device.ld), so that checked mode knows where shared memory ends.
#define __shared__ static __attribute__((section("kc_shared")))
#endif
// __device__ and __constant__ variables: a section the launcher maps shared by every
// worker and keeps for the module's lifetime (kc_device.ld, which runtime/cudacheck/cpu/compiler.py links with).
#define KC_DEVICE_VAR __attribute__((section("kc_device")))
#if defined(KC_FRONTEND) && defined(__CUDA__)
#define __host__ __attribute__((host))
#else
#define __host__
#endif
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
// A kernel's __launch_bounds__: the front end reads its first argument where the annotation is
// and puts ::kc::launch_bounds first in the kernel's body (runtime/cudacheck/frontend/reader.py),
// so that a launch of more threads per block fails as on a GPU. __maxnreg__ and the other
// arguments shape register allocation, which the CPU runtime does not model.
#ifdef KC_FRONTEND
#define __launch_bounds__(...) __attribute__((annotate("kc_launch_bounds")))
#else
#define __launch_bounds__(...)
#endif
#define __maxnreg__(...)
// A kernel's cluster: the front end reads the macro's arguments where its annotation is, and
// the launch stubs have g++ evaluate them (runtime/cudacheck/cpu/compiler.py).
#ifdef KC_FRONTEND
#define __cluster_dims__(...) __attribute__((annotate("kc_cluster_dims")))
#else
#define __cluster_dims__(...)
#endif
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
// A built-in variable in CUDA, not a macro: `prop.warpSize` (cudaDeviceProp) must still compile.
static constexpr int warpSize = 32;

// ---- where a fiber is: the runtime state the built-ins read -------------------------
namespace kc {
enum ThreadState : uint8_t { RUNNABLE, AT_SYNCTHREADS, AT_WARP, EXITED };
// A warp-collective operation a thread waits at (state AT_WARP).
enum WarpOp : uint8_t { SYNCWARP, SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR, BALLOT, ANY, ALL, MATCH_ANY, MATCH_ALL,
                        REDUCE_ADD, REDUCE_MIN, REDUCE_MAX, REDUCE_AND, REDUCE_OR, REDUCE_XOR, REDUCE_MIN_S,
                        REDUCE_MAX_S, REDUCE_ADD_S, COLLECTIVE /* a wmma operation: kc_warp.h */,
                        ACTIVEMASK /* __activemask(): the lanes that arrive at it together */ };
// __syncthreads_count/_and/_or: what a block barrier computes as it releases. BARRIER_COUNTED:
// bar.sync 0, n with n the whole block's threads, which a GPU tells apart from __syncthreads()'s
// arrival without a count (kc_ptx.cpp: barrier_form). BARRIER_GRID: grid.sync(), which is first a
// barrier of the block and then of the grid (kc_grid.cpp).
enum BlockOp : uint8_t { BARRIER, BARRIER_COUNT, BARRIER_AND, BARRIER_OR, BARRIER_COUNTED, BARRIER_GRID };
struct Thread {
    void* sp;              // saved stack pointer while switched out
    uint3 idx;             // threadIdx
    uint32_t linear;       // x + y*bx + z*bx*by: warp = linear / 32
    uint32_t pos;          // place in the schedule's order
    uint8_t state;
    uint8_t op;            // the WarpOp or BlockOp it waits at
    uint32_t mask;         // the member mask of the warp operation it waits at
    int32_t arg;           // shuffle: source lane, delta or lane mask
    int32_t width;         // shuffle: segment width
    uint64_t value;        // its contribution (shuffled bits, predicate)
    uint64_t result;       // what the operation gave it
    int line;              // source line of the barrier or warp operation it waits at
    int exit_line;         // the `return` it left by (0: the kernel's end)
    uint32_t seq;          // checked mode: its position in this barrier interval (its shared accesses, proxy fences)
    uintptr_t poll_addr;   // the location it last read atomically or through a volatile pointer,
    uint64_t poll_value;   // the value it held then,
    uint64_t poll_key;     // the operands of the atomic that read it (0: a volatile read),
    uint32_t polls;        // and how many such reads in a row found it unchanged (kc_poll.cpp: poll)
    const void* poll_pc;
    const void* mbarrier;  // while it is switched out at a wait for an mbarrier's phase: the
    int mbarrier_line;     // barrier and the wait's line (0: it waits for none; kc_ptx.cpp)
    const void* asm_pc;    // in a call of translated inline PTX into the runtime: its return address, in
                           // the kernel's code: the asm's line and its helpers' calls (kc_runtime.h: AsmCall)
    uint32_t cluster_phase;  // the cluster barrier's phase it last arrived in, plus one (kc_cluster.cpp)
    uint32_t zero_arrival;   // barrier 0's generation it arrived in with bar.arrive, plus one (kc_ptx.cpp)
    uint8_t named_wait;      // while it waits at bar.sync: the barrier's id plus one, its line in `line`
    bool cluster_wait;       // while it waits at barrier.cluster.wait (its line in `line`; kc_cluster.cpp)
};
extern Thread* cur;        // the fiber running now
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;
void syncthreads(int line, uint8_t op = BARRIER, int pred = 0);
void grid_sync(int line);       // cooperative_groups::grid_group::sync() (kc_grid.cpp)
bool grid_cooperative();        // whether the launch is cooperative: grid_group::is_valid()
uint64_t warp_op(uint8_t op, unsigned mask, uint64_t value, int arg, int width, int line);
unsigned active_mask(int line);
void thread_exit(int line);
[[noreturn]] void assert_fail(const char* expr, int line);
// __launch_bounds__(maxThreadsPerBlock, ...) of a kernel declared on `line`: a block of more
// threads ends the launch as a GPU refuses it (kc_launch.cpp), before the kernel does anything.
[[noreturn]] void launch_bounds_exceeded(long long bound, int line);
// Its first argument, of the one to three the attribute takes (maxThreadsPerBlock, minBlocksPerMultiprocessor,
// maxBlocksPerCluster), as the front end passes them all.
constexpr long long max_threads_of(long long max_threads, long long = 0, long long = 0) { return max_threads; }
template <long long N>
inline void launch_bounds(int line) {
    if ((long long)block_dim.x * block_dim.y * block_dim.z > N) launch_bounds_exceeded(N, line);
}
void* dynamic_shared(const char* name, int id, size_t elem, size_t granule);
void shared_extent(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims);
// Checked mode's shadow entry for a shared element of type T: a scalar is one entry; a
// struct one per alignment unit, so that threads writing different fields do not race.
template <class T> constexpr size_t granule() { return __is_class(T) || __is_union(T) ? alignof(T) : sizeof(T); }
template <class T> constexpr size_t granule_of(const volatile T&) { return granule<T>(); }

// The shape of a shared variable's type, for shared_register: T[a][b] -> rank 2, {a, b}.
template <class T> struct shape { using elem = T; static constexpr int rank = 0; static void dims(unsigned*) {} };
template <class T, size_t N> struct shape<T[N]> {
    using elem = typename shape<T>::elem;
    static constexpr int rank = 1 + shape<T>::rank;
    static void dims(unsigned* d) { d[0] = unsigned(N); shape<T>::dims(d + 1); }
};
// Called as each thread passes `__shared__ T name...;` (the front end appends the call on
// the declaration's line): the variable's place, size and shape.
template <class T>
inline void shared_register(int id, T& var) {
    unsigned dims[8] = {0};
    shape<T>::dims(dims);
    using E = typename shape<T>::elem;
    shared_extent(id, nullptr, (void*)&var, sizeof(T), sizeof(E), granule<E>(), shape<T>::rank, dims);
}
}  // namespace kc

// blockIdx, blockDim and gridDim are read-only names of the worker's globals, declared as CUDA
// declares its built-in variables, so that a host variable of the same name (`dim3 gridDim(gx,
// gy);` before a launch) shadows them as it does under nvcc. threadIdx is each fiber's own, so a
// macro reading the running fiber's.
#define threadIdx (static_cast<const uint3&>(::kc::cur->idx))
inline constexpr const uint3& blockIdx = ::kc::block_idx;
inline constexpr const dim3& blockDim = ::kc::block_dim;
inline constexpr const dim3& gridDim = ::kc::grid_dim;

// ---- barriers and warp operations ----------------------------------------------------
#define __syncthreads() ::kc::syncthreads(__LINE__)
#define __syncthreads_count(p) int(::kc::syncthreads_value(__LINE__, ::kc::BARRIER_COUNT, (p)))
#define __syncthreads_and(p) int(::kc::syncthreads_value(__LINE__, ::kc::BARRIER_AND, (p)))
#define __syncthreads_or(p) int(::kc::syncthreads_value(__LINE__, ::kc::BARRIER_OR, (p)))
#define __syncwarp(...) ((void)::kc::warp_op(::kc::SYNCWARP, ::kc::mask_arg(__VA_ARGS__), 0, 0, 32, __LINE__))
#define __activemask() ::kc::active_mask(__LINE__)
#define __ballot_sync(m, p) unsigned(::kc::warp_op(::kc::BALLOT, (m), (p) != 0, 0, 32, __LINE__))
#define __any_sync(m, p) int(::kc::warp_op(::kc::ANY, (m), (p) != 0, 0, 32, __LINE__))
#define __all_sync(m, p) int(::kc::warp_op(::kc::ALL, (m), (p) != 0, 0, 32, __LINE__))
#define __shfl_sync(m, v, ...) ::kc::shfl(::kc::SHFL_IDX, (m), (v), __LINE__, __VA_ARGS__)
#define __shfl_up_sync(m, v, ...) ::kc::shfl(::kc::SHFL_UP, (m), (v), __LINE__, __VA_ARGS__)
#define __shfl_down_sync(m, v, ...) ::kc::shfl(::kc::SHFL_DOWN, (m), (v), __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(m, v, ...) ::kc::shfl(::kc::SHFL_XOR, (m), (v), __LINE__, __VA_ARGS__)
#define __match_any_sync(m, v) ::kc::match(::kc::MATCH_ANY, (m), (v), __LINE__, nullptr)
#define __match_all_sync(m, v, pred) ::kc::match(::kc::MATCH_ALL, (m), (v), __LINE__, (pred))
#define __reduce_add_sync(m, v) ::kc::reduce(::kc::REDUCE_ADD, (m), (v), __LINE__)
#define __reduce_min_sync(m, v) ::kc::reduce(::kc::REDUCE_MIN, (m), (v), __LINE__)
#define __reduce_max_sync(m, v) ::kc::reduce(::kc::REDUCE_MAX, (m), (v), __LINE__)
#define __reduce_and_sync(m, v) unsigned(::kc::warp_op(::kc::REDUCE_AND, (m), unsigned(v), 0, 32, __LINE__))
#define __reduce_or_sync(m, v) unsigned(::kc::warp_op(::kc::REDUCE_OR, (m), unsigned(v), 0, 32, __LINE__))
#define __reduce_xor_sync(m, v) unsigned(::kc::warp_op(::kc::REDUCE_XOR, (m), unsigned(v), 0, 32, __LINE__))
namespace kc {
constexpr unsigned mask_arg() { return 0xffffffffu; }
constexpr unsigned mask_arg(unsigned m) { return m; }
inline unsigned syncthreads_value(int line, uint8_t op, int pred) {
    syncthreads(line, op, pred != 0);
    return unsigned(cur->result);
}
// A shuffled value travels as its bits: CUDA shuffles the 32- and 64-bit arithmetic types.
template <class T> struct shuffled { static constexpr bool ok = false; };
#define KC_SHUFFLED(T) template <> struct shuffled<T> { static constexpr bool ok = true; };
KC_SHUFFLED(int) KC_SHUFFLED(unsigned) KC_SHUFFLED(long) KC_SHUFFLED(unsigned long) KC_SHUFFLED(long long)
KC_SHUFFLED(unsigned long long) KC_SHUFFLED(float) KC_SHUFFLED(double)
#undef KC_SHUFFLED
template <class T>
inline T shfl(uint8_t op, unsigned mask, T v, int line, int arg, int width = 32) {
    static_assert(shuffled<T>::ok, "__shfl*_sync takes int, unsigned, long, long long (and unsigned), float or double");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = warp_op(op, mask, bits, arg, width, line);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}
template <class T>
inline unsigned match(uint8_t op, unsigned mask, T v, int line, int* pred) {
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    uint64_t r = warp_op(op, mask, bits, int(sizeof(T)), 32, line);
    if (pred) *pred = r != 0;
    return unsigned(r);
}
inline unsigned reduce(uint8_t op, unsigned mask, unsigned v, int line) { return unsigned(warp_op(op, mask, v, 0, 32, line)); }
inline int reduce(uint8_t op, unsigned mask, int v, int line) {
    uint8_t signed_op = op == REDUCE_MIN ? REDUCE_MIN_S : op == REDUCE_MAX ? REDUCE_MAX_S : REDUCE_ADD_S;
    return int(warp_op(signed_op, mask, uint64_t(int64_t(v)), 0, 32, line));
}
}  // namespace kc

// Within a worker process fibers never run at once, and blocks in other workers only share
// global memory through real atomics, so the fences need only stop the compiler.
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
namespace kc { void threadfence_block(); }   // kc_memory.cpp: checked mode takes its scope
inline void __threadfence_block() { ::kc::threadfence_block(); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

#undef assert
#define assert(e) ((e) ? (void)0 : ::kc::assert_fail(#e, __LINE__))
#define __trap() ::kc::assert_fail("__trap()", __LINE__)
#define __brkpt() ::kc::assert_fail("__brkpt()", __LINE__)

// ---- atomics (kc_memory.cpp): real atomics, since workers share global memory; in
// checked mode each is also an ordered read-modify-write in the shared-memory shadow.
// CUDA's overloads exactly: atomicAdd(float*, 1.0) converts the 1.0 as CUDA does.
#define KC_ATOMIC(NAME, T) T NAME(T* address, T val); T NAME##_block(T* address, T val); T NAME##_system(T* address, T val);
#define KC_ATOMIC_INT(NAME) KC_ATOMIC(NAME, int) KC_ATOMIC(NAME, unsigned int) KC_ATOMIC(NAME, unsigned long long)
KC_ATOMIC_INT(atomicAdd) KC_ATOMIC(atomicAdd, float) KC_ATOMIC(atomicAdd, double)
KC_ATOMIC(atomicSub, int) KC_ATOMIC(atomicSub, unsigned int)
KC_ATOMIC_INT(atomicExch) KC_ATOMIC(atomicExch, float)
KC_ATOMIC_INT(atomicMin) KC_ATOMIC(atomicMin, long long)
KC_ATOMIC_INT(atomicMax) KC_ATOMIC(atomicMax, long long)
KC_ATOMIC(atomicInc, unsigned int) KC_ATOMIC(atomicDec, unsigned int)
KC_ATOMIC_INT(atomicAnd) KC_ATOMIC_INT(atomicOr) KC_ATOMIC_INT(atomicXor)
#undef KC_ATOMIC_INT
#undef KC_ATOMIC
#define KC_ATOMIC_CAS(T) T atomicCAS(T* address, T compare, T val); T atomicCAS_block(T* address, T compare, T val); \
    T atomicCAS_system(T* address, T compare, T val);
KC_ATOMIC_CAS(int) KC_ATOMIC_CAS(unsigned int) KC_ATOMIC_CAS(unsigned long long) KC_ATOMIC_CAS(unsigned short)
#undef KC_ATOMIC_CAS

#include "../src/kc_gpu_arith.h"
#include "../src/kc_intrinsics.h"
#include "../src/kc_gpu_math.h"
#include "../src/kc_ptx.h"
#include "texture_indirect_functions.h"

#ifdef KC_PROGRAM
// A whole program: its host code has the C library and the CUDA runtime API.
#include "../src/kc_host.h"
#else
// What the C headers above define and NVRTC does not: a kernel that uses it must fail here as
// it fails on a GPU (runtime/cudacheck/frontend/nvrtc.py also refuses the C library's headers and typedefs).
#undef INFINITY
#undef NAN
#undef HUGE_VAL
#undef HUGE_VALF
#undef HUGE_VALL
#undef M_E
#undef M_LOG2E
#undef M_LOG10E
#undef M_LN2
#undef M_LN10
#undef M_PI
#undef M_PI_2
#undef M_PI_4
#undef M_1_PI
#undef M_2_PI
#undef M_2_SQRTPI
#undef M_SQRT2
#undef M_SQRT1_2
#undef FLT_MAX
#undef FLT_MIN
#undef FLT_EPSILON
#undef DBL_MAX
#undef DBL_MIN
#undef DBL_EPSILON
#undef INT_MAX
#undef INT_MIN
#undef UINT_MAX
#undef LONG_MAX
#undef LONG_MIN
#undef ULONG_MAX
#undef LLONG_MAX
#undef LLONG_MIN
#undef ULLONG_MAX
#undef SHRT_MAX
#undef SHRT_MIN
#undef USHRT_MAX
#undef CHAR_BIT
#undef RAND_MAX
#undef EXIT_SUCCESS
#undef EXIT_FAILURE
#endif

#ifdef KC_CHECKED
// A kernel's own __builtin_memcpy, __builtin_memset or __builtin_memmove of a constant size is
// expanded into moves the instrumentation never sees: as calls of the checked runtime's
// memcpy, memset and memmove (kc_check_access.cpp) they are checked like any access.
#define __builtin_memcpy memcpy
#define __builtin_memset memset
#define __builtin_memmove memmove
#endif
