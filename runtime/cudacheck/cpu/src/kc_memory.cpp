// The memory a kernel's threads share beyond their arguments: shared variables (and the GPU's
// limit on them), asynchronous copies into shared memory (cp.async), atomics and __device__
// variables; and the report of an operand CUDA forbids (a misaligned copy or wmma pointer).
#include <errno.h>
#include <sys/mman.h>

#include "kc_runtime.h"

namespace kc {

// ---- shared variables -------------------------------------------------------------------
// Dynamic shared memory (kc_runtime.h).
alignas(256) unsigned char dynamic_smem[DYNAMIC_SHARED_CAPACITY + 4096];

// Static shared memory a launch has touched, for the GPU's limit (checked in both modes).
static uint64_t static_shared_seen[2];   // bit per shared variable id < 128
static uint64_t static_shared_bytes;

[[noreturn]] static void shared_limit_exceeded(size_t bytes) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::shared_limit,
             "\"static\":%zu,\"dynamic\":%llu,\"limit\":%llu}", bytes,
             (unsigned long long)launch->shared_mem, (unsigned long long)launch->shared_limit);
    fflush(stdout);
    _exit(5);
}

void shared_extent(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims) {
    if (!launch) return;
    if (id < 128 && !((static_shared_seen[id / 64] >> (id % 64)) & 1)) {
        static_shared_seen[id / 64] |= 1ull << (id % 64);
        static_shared_bytes += bytes;
        if (static_shared_bytes > 48 * 1024 || static_shared_bytes + launch->shared_mem > launch->shared_limit)
            shared_limit_exceeded(static_shared_bytes);
    }
#ifdef KC_CHECKED
    shared_region(id, name, addr, bytes, elem, granule, rank, dims, false);
#else
    (void)name, (void)addr, (void)elem, (void)granule, (void)rank, (void)dims;
#endif
}

void* dynamic_shared(const char* name, int id, size_t elem, size_t granule) {
#ifdef KC_CHECKED
    unsigned dims[1] = {0};
    if (launch) shared_region(id, name, dynamic_smem, launch->shared_mem, elem, granule, 1, dims, true);
#else
    (void)name, (void)id, (void)elem, (void)granule;
#endif
    return dynamic_smem;
}

// ---- operands CUDA forbids ---------------------------------------------------------------
// Reported in both modes where a GPU refuses them too (a misaligned wmma pointer or copy, a
// copy size cp.async does not have), and by checked mode alone where CUDA leaves the result
// undefined (a leading dimension); runtime/cudacheck/cpu/findings/ words each problem.
[[noreturn]] void operand_error(const char* problem, const char* what, const void* ptr, uint64_t value,
                                uint64_t need, int line) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::operand,
             "\"problem\":\"%s\",\"what\":\"%s\",\"address\":%llu,\"value\":%llu,"
             "\"need\":%llu,\"line\":%d,\"block\":%u,\"thread\":%u}",
             problem, what, (unsigned long long)reinterpret_cast<uintptr_t>(ptr), (unsigned long long)value,
             (unsigned long long)need, line, my_status->block, cur ? cur->linear : 0);
    fflush(stdout);
    _exit(5);
}

// ---- asynchronous copies (cp.async through <cuda_pipeline.h>) --------------------------
//
// Each thread has a queue of the copies it issued, each tagged with its batch: the number of
// __pipeline_commit() calls before it. __pipeline_wait_prior(n) completes every copy of the
// committed batches but the newest n; a copy not yet committed is in no batch and stays in
// flight. A copy is performed when it completes, by its own thread, and not before: on a
// GPU it lands at some moment between its issue and the wait, so a kernel that reads the
// destination before waiting (or, in another thread, before the barrier after the wait) may
// see the old contents, as it does here. A thread that exits completes what it has in flight.
struct Pipe {
    AsyncCopy* queue = nullptr;
    uint32_t n = 0, cap = 0;
    uint64_t committed = 0;
};
static Pipe* pipes = nullptr;   // one per thread, reset as each block starts

void async_reserve(unsigned n) { pipes = new Pipe[n]; }

void async_block_start(unsigned nthreads) {
    for (unsigned i = 0; i < nthreads; ++i) pipes[i].n = 0, pipes[i].committed = 0;
}

void async_copy(void* dst, const void* src, size_t size, size_t zfill, void* pc, int line) {
    const char* what = "__pipeline_memcpy_async";
    // <cuda_pipeline.h> traps on any other size or zfill; cp.async faults on a misaligned address.
    if (size != 4 && size != 8 && size != 16) operand_error("copy_size", what, dst, size, 0, line);
    if (zfill > size) operand_error("zfill", what, dst, zfill, size, line);
    if (reinterpret_cast<uintptr_t>(dst) % size) operand_error("misaligned_dst", what, dst, size, size, line);
    if (reinterpret_cast<uintptr_t>(src) % size) operand_error("misaligned_src", what, src, size, size, line);
    Pipe& p = pipes[cur->linear];
    if (p.n == p.cap) {
        uint32_t cap = p.cap ? 2 * p.cap : 16;
        AsyncCopy* q = static_cast<AsyncCopy*>(realloc(p.queue, sizeof(AsyncCopy) * cap));
        if (!q) {
            my_status->code = OUT_OF_MEMORY;
            _exit(4);
        }
        p.queue = q;
        p.cap = cap;
    }
    AsyncCopy c{static_cast<char*>(dst), static_cast<const char*>(src), uint32_t(size), uint32_t(zfill), p.committed,
                pc, line};
#ifdef KC_CHECKED
    check_async_issue(c);
#endif
    p.queue[p.n++] = c;
}

void async_commit() { pipes[cur->linear].committed++; }

static void async_perform(const AsyncCopy& c) {
#ifdef KC_CHECKED
    check_async_complete(c);
#endif
    // byte by byte: the checked runtime's memcpy would account the copy as the runtime's own access
    uint32_t from_src = c.size - c.zfill;
    for (uint32_t i = 0; i < c.size; ++i) c.dst[i] = i < from_src ? c.src[i] : 0;
}

// Completes the copies of batches older than `before` (all: ~0), in the order they were issued.
static void async_complete(Pipe& p, uint64_t before) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p.n; ++i) {
        if (p.queue[i].batch < before) async_perform(p.queue[i]);
        else p.queue[kept++] = p.queue[i];
    }
    p.n = kept;
}

void async_thread_exit(unsigned thread) {
    Pipe& p = pipes[thread];
    if (p.n) async_complete(p, ~uint64_t(0));
}

void async_wait_prior(size_t n) {
    Pipe& p = pipes[cur->linear];
    if (n > 8) n = 8;   // <cuda_pipeline.h> waits for all but 8 at most (_CUDA_PIPELINE_MAX_STAGES)
    if (p.committed > n) async_complete(p, p.committed - n);
}

}  // namespace kc

namespace kc {
// Within a worker fibers never run at once: the fence need only stop the compiler. Checked mode
// takes its scope: it orders the thread's accesses for its own block's threads only.
void threadfence_block() {
#ifdef KC_CHECKED
    global_fence(SCOPE_BLOCK);
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
}  // namespace kc

// ---- atomics -------------------------------------------------------------------------
// Real atomics: blocks in other workers share global memory. The _block and _system
// variants are the same operation here (one block runs at a time per worker); checked mode
// takes their scope (KC_SCOPE).
// Every atomic is checked (checked mode) and then counted as a poll of its location (a lock
// or a flag another thread sets: kc_poll.cpp).
#ifdef KC_CHECKED
#define KC_ATOMIC_CHECK(p, reads, cas) \
    ::kc::atomic_access((void*)(p), sizeof(*(p)), __builtin_return_address(0), reads, cas)
#else
#define KC_ATOMIC_CHECK(p, reads, cas) ((void)0)
#endif
#define KC_ATOMIC_HOOK_OF(p, reads, cas, key) \
    (KC_ATOMIC_CHECK(p, reads, cas), ::kc::poll((p), sizeof(*(p)), __builtin_return_address(0), (key)))
#define KC_ATOMIC_HOOK(p, reads) KC_ATOMIC_HOOK_OF(p, reads, false, operand_key(v))

// An atomic's operand as bits, for poll: a loop that passes new operands is not waiting.
template <class T>
static uint64_t operand_key(T v) {
    if constexpr (sizeof(T) == 8) return __builtin_bit_cast(uint64_t, v);
    else if constexpr (sizeof(T) == 4) return __builtin_bit_cast(uint32_t, v);
    else return __builtin_bit_cast(uint16_t, v);
}
// The _block and _system variants: the same operation, with its scope for checked mode.
#ifdef KC_CHECKED
#define KC_SCOPE(s) ::kc::atomic_scope(s, __builtin_return_address(0))
#else
#define KC_SCOPE(s) ((void)0)
#endif
#define KC_ATOMIC_VARIANTS(R, NAME, PARAMS, ARGS) \
    R NAME##_block PARAMS { KC_SCOPE(::kc::SCOPE_BLOCK); return NAME ARGS; } \
    R NAME##_system PARAMS { KC_SCOPE(::kc::SCOPE_SYSTEM); return NAME ARGS; }

#define KC_FETCH(NAME, T, BUILTIN) \
    T NAME(T* p, T v) { KC_ATOMIC_HOOK(p, true); return BUILTIN(p, v, __ATOMIC_SEQ_CST); } \
    KC_ATOMIC_VARIANTS(T, NAME, (T* p, T v), (p, v))
#define KC_FETCH_INT(NAME, BUILTIN) KC_FETCH(NAME, int, BUILTIN) KC_FETCH(NAME, unsigned int, BUILTIN) \
    KC_FETCH(NAME, unsigned long long, BUILTIN)
KC_FETCH_INT(atomicAdd, __atomic_fetch_add)
KC_FETCH(atomicSub, int, __atomic_fetch_sub)
KC_FETCH(atomicSub, unsigned int, __atomic_fetch_sub)
KC_FETCH_INT(atomicAnd, __atomic_fetch_and)
KC_FETCH_INT(atomicOr, __atomic_fetch_or)
KC_FETCH_INT(atomicXor, __atomic_fetch_xor)

// The rest are compare-and-swap loops: new = f(old).
template <class T, class F>
static T cas_loop(T* p, F f) {
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old, f(old), true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
// Floats through their bits, so that the comparison is of bits, not values (NaN, -0.0).
template <class T, class U, class F>
static T cas_bits(T* p, F f) {
    U* q = reinterpret_cast<U*>(p);
    U old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
        T o, n;
        memcpy(&o, &old, sizeof o);
        n = f(o);
        U nb;
        memcpy(&nb, &n, sizeof nb);
        if (__atomic_compare_exchange_n(q, &old, nb, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return o;
    }
}
float atomicAdd(float* p, float v) { KC_ATOMIC_HOOK(p, true); return cas_bits<float, uint32_t>(p, [v](float o) { return o + v; }); }
double atomicAdd(double* p, double v) { KC_ATOMIC_HOOK(p, true); return cas_bits<double, uint64_t>(p, [v](double o) { return o + v; }); }
KC_ATOMIC_VARIANTS(float, atomicAdd, (float* p, float v), (p, v))
KC_ATOMIC_VARIANTS(double, atomicAdd, (double* p, double v), (p, v))

#define KC_EXCH(T) \
    T atomicExch(T* p, T v) { KC_ATOMIC_HOOK(p, false); return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); } \
    KC_ATOMIC_VARIANTS(T, atomicExch, (T* p, T v), (p, v))
KC_EXCH(int) KC_EXCH(unsigned int) KC_EXCH(unsigned long long)
float atomicExch(float* p, float v) {
    KC_ATOMIC_HOOK(p, false);
    uint32_t b, o;
    memcpy(&b, &v, 4);
    o = __atomic_exchange_n(reinterpret_cast<uint32_t*>(p), b, __ATOMIC_SEQ_CST);
    float r;
    memcpy(&r, &o, 4);
    return r;
}
KC_ATOMIC_VARIANTS(float, atomicExch, (float* p, float v), (p, v))

#define KC_MINMAX(T) \
    T atomicMin(T* p, T v) { KC_ATOMIC_HOOK(p, true); return cas_loop(p, [v](T o) { return v < o ? v : o; }); } \
    T atomicMax(T* p, T v) { KC_ATOMIC_HOOK(p, true); return cas_loop(p, [v](T o) { return v > o ? v : o; }); } \
    KC_ATOMIC_VARIANTS(T, atomicMin, (T* p, T v), (p, v)) KC_ATOMIC_VARIANTS(T, atomicMax, (T* p, T v), (p, v))
KC_MINMAX(int) KC_MINMAX(unsigned int) KC_MINMAX(unsigned long long) KC_MINMAX(long long)

// atomicInc: ((old >= val) ? 0 : (old + 1)); atomicDec: ((old == 0) | (old > val)) ? val : (old - 1).
unsigned int atomicInc(unsigned int* p, unsigned int v) {
    KC_ATOMIC_HOOK(p, true);
    return cas_loop(p, [v](unsigned o) { return o >= v ? 0u : o + 1; });
}
unsigned int atomicDec(unsigned int* p, unsigned int v) {
    KC_ATOMIC_HOOK(p, true);
    return cas_loop(p, [v](unsigned o) { return (o == 0 || o > v) ? v : o - 1; });
}
KC_ATOMIC_VARIANTS(unsigned int, atomicInc, (unsigned int* p, unsigned int v), (p, v))
KC_ATOMIC_VARIANTS(unsigned int, atomicDec, (unsigned int* p, unsigned int v), (p, v))

#define KC_CAS(T) \
    T atomicCAS(T* p, T compare, T v) { \
        KC_ATOMIC_HOOK_OF(p, true, true, operand_key(v) * 31 + operand_key(compare)); \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return compare; \
    } \
    KC_ATOMIC_VARIANTS(T, atomicCAS, (T* p, T c, T v), (p, c, v))
KC_CAS(int) KC_CAS(unsigned int) KC_CAS(unsigned long long) KC_CAS(unsigned short)

// ---- device variables ------------------------------------------------------------------
// The section of __device__ and __constant__ variables, page-aligned by the linker script.
extern "C" char __start_kc_device[] __attribute__((weak));
extern "C" char __stop_kc_device[] __attribute__((weak));

// Called by the loader (share_device_memory, runtime/cudacheck/cpu/__init__.py) once, in the
// caller's process: the section becomes shared memory, so every worker of every launch of this
// module sees one copy, as blocks on a GPU see one device memory and values persist from launch
// to launch.
extern "C" int kc_share_device_memory(void** start, uint64_t* bytes) {
    *start = __start_kc_device;
    *bytes = __stop_kc_device - __start_kc_device;
    if (!*bytes) return 0;
    void* copy = malloc(*bytes);
    if (!copy) return -ENOMEM;
    memcpy(copy, __start_kc_device, *bytes);
    void* m = mmap(__start_kc_device, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (m == MAP_FAILED) {
        free(copy);
        return -errno;
    }
    memcpy(__start_kc_device, copy, *bytes);
    free(copy);
    return 0;
}
