// Checked mode's accesses (kc_check.h): the instrumentation's entry points, which g++
// -fsanitize=thread calls around every load and store of the kernel's unit, and the C
// library's memory functions as the kernel calls them, all come to on_access, which finds the
// region an access lies in and hands it to each check (bounds, initialization, races on global
// and on shared memory), and counts and traces it.
//
// Warp-collective operations (wmma). Each lane's element accesses are accounted as its own,
// at the line of the call; every element of a tile must lie in the array the tile's pointer
// points into (tile_access).
#include "kc_check.h"

namespace kc {

static void trace(const Region* r, int64_t elem, uint8_t width, uint32_t pc, Op op) {
    CheckDesc* d = chk.desc;
    if (d->trace_threads && !d->trace_threads[cur->linear]) return;
    uint64_t n = (*chk.trace_count)++;
    if (n < d->trace_capacity) chk.trace[n] = TraceRecord{my_status->block, chk.epoch, cur->linear, r->id, elem, pc, op, width, {}};
}

// Every load and store of the kernel comes here (through the __tsan_* entry points).
void on_access(const void* p, unsigned size, const void* ret, Op op, bool atomic, bool atomic_reads,
               bool is_volatile) {
    if (!cur) return;   // not a kernel's thread: a whole program's host code, a library's initializers
    if (!atomic && !is_volatile) cur->polls = 0;   // not only polling (kc_poll.cpp: poll)
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    Region* r = nullptr;
    bool sub = chk.sub.set && cur && chk.sub.thread == cur->linear;
    if (a - chk.slot_lo < chk.slot_span) {
        r = chk.slots[(a - chk.slot_lo) >> chk.desc->slot_shift];
        if (!r) out_of_bounds(nullptr, "[0]", "[0]", size, pc_of(ret), 0, op == READ ? "read" : "write");
        for (Region* v = r; v; v = v->next)   // overlapping views of one array share a slot
            if (a >= uintptr_t(v->base) && a + size <= uintptr_t(v->base) + v->bytes) { r = v; break; }
    } else if (chk.dynamic && a - uintptr_t(chk.dynamic->base) < DYNAMIC_SHARED_CAPACITY + 4096) {
        r = chk.dynamic;
    } else if (a - chk.shared_lo < chk.shared_hi - chk.shared_lo || a - kc_shared_lo() < kc_shared_span()) {
        r = find_static_shared(a);
        if (!r) return;
    } else if (a - chk.device_lo < chk.device_hi - chk.device_lo) {
        r = find_device(a);
    } else if (a < 65536) {
        out_of_bounds(nullptr, "[0]", "[0]", size, pc_of(ret), 0, op == READ ? "read" : "write");
    } else {
        if (sub && subscripted(a)) bad_subscript(subscripted(a), a, size, pc_of(ret), op);
        if (accumulators_pending) check_accumulator_access(a, size, pc_of(ret), op);
        return;   // the thread's own stack, the runtime's data: not checked otherwise
    }
    uint32_t pc = pc_of(ret);
    // A bad subscript of a shared array is reported at its access; one of a local array
    // (whose accesses are not instrumented) when the interval ends.
    if (sub && (r->kind == SHARED || r->kind == DYNAMIC)) {
        Region* s = subscripted(a);
        if (s) bad_subscript(s, a, size, pc, op);
    }
    int64_t off = int64_t(a) - int64_t(uintptr_t(r->base));
    if (outside_allocation(r, off, size)) outside(r, off, size, pc, op == READ ? "read" : "write");
    if (r->init) global_init(r, off, size, pc, op == READ || (atomic && atomic_reads), op == WRITE);
    if (r->gm)   // every atomic reads (atomicExch returns the old value): all acquire
        global_memory(r, a, size, pc, op == READ || atomic, op == WRITE, atomic || is_volatile, atomic);
    if (r->id < 0) return;   // device variables, allocations not passed as arguments: bounds only
    bool is_shared = r->kind == SHARED || r->kind == DYNAMIC;
    int slot = is_shared ? 2 * (int(chk.desc->nparams) + (r->id - SHARED_ID_BASE)) : 2 * r->id;
    if (atomic) {
        chk.counts[slot]++;
        chk.counts[slot + 1]++;
    } else {
        chk.counts[slot + op]++;
    }
    if (chk.tracing) {
        // In the array's own elements, as a reader indexes it: a float4 load of a float
        // array is 4 elements from its first, not element i of an array of float4s.
        int64_t elem = r->elem_size ? r->elem_size : size;   // before a view's start: negative indices
        trace(r, off >= 0 ? off / elem : -((-off + elem - 1) / elem), uint8_t(size > elem ? size / elem : 1), pc, op);
    }
    uint64_t granule = is_shared ? (r->granule ? r->granule : r->elem_size) : size;
    if (!is_shared) return;
    check_async_access(p, size, pc, op);   // before the race check: its finding is the more precise
    for (uint64_t e = uint64_t(off) / granule; e <= (uint64_t(off) + size - 1) / granule; ++e)
        shared_element(r, e, pc, op, atomic, atomic_reads);
    cur->seq++;
}

// A _block or _system atomic calls the plain one: its scope and its caller's place are set here
// for the one check that follows (none can come between: the check is the atomic's first act).
static int next_scope = SCOPE_DEVICE;
static void* next_pc = nullptr;
void atomic_scope(int scope, void* pc) {
    next_scope = scope;
    next_pc = pc;
}

void atomic_access(void* addr, unsigned size, void* pc, bool reads, bool cas) {
    chk.cas = cas;
    chk.scope = next_scope;
    if (next_pc) pc = next_pc;
    next_scope = SCOPE_DEVICE;
    next_pc = nullptr;
    on_access(addr, size, pc, WRITE, true, reads);
    chk.cas = false;
    chk.scope = SCOPE_DEVICE;
}

void tile_access(const Collective* c, const void* addr, unsigned size, bool write, int rows, int cols, int row,
                 int col) {
    if (!cur) return;
    uint32_t pc = pc_of(c->pc);
    Op op = write ? WRITE : READ;
    Region* r = region_at(reinterpret_cast<const void*>(c->key[0]), 1, pc, op);
    if (r) {
        int64_t off = int64_t(reinterpret_cast<uintptr_t>(addr)) - int64_t(uintptr_t(r->base));
        if (outside_allocation(r, off, size)) {
            static char via[256];
            snprintf(via, sizeof via, "element (%d, %d) of the %d x %d tile that %s %s, with ldm %llu, %s", row, col,
                     rows, cols, c->what, write ? "writes" : "reads", (unsigned long long)c->key[1],
                     c->key[2] ? "column-major" : "row-major");
            chk.via = via;
            outside(r, off, size, pc, write ? "write" : "read");
        }
    }
    chk.collective = true;
    on_access(addr, size, c->pc, op);
    chk.collective = false;
}

}  // namespace kc

// ---- the instrumentation's entry points -------------------------------------------------
// g++ -fsanitize=thread calls these around every load and store of the kernel's unit
// (-fsanitize=bounds calls kc_check_bounds.cpp's handler for a subscript outside an array's
// dimension).
#define KC_TSAN(N)                                                                                             \
    extern "C" void __tsan_read##N(void* p) { kc::on_access(p, N, __builtin_return_address(0), kc::READ); }     \
    extern "C" void __tsan_write##N(void* p) { kc::on_access(p, N, __builtin_return_address(0), kc::WRITE); }   \
    extern "C" void __tsan_unaligned_read##N(void* p) { kc::on_access(p, N, __builtin_return_address(0), kc::READ); } \
    extern "C" void __tsan_unaligned_write##N(void* p) { kc::on_access(p, N, __builtin_return_address(0), kc::WRITE); } \
    extern "C" void __tsan_volatile_read##N(void* p) {                                                        \
        kc::on_access(p, N, __builtin_return_address(0), kc::READ, false, false, true);                          \
        kc::poll(p, N, __builtin_return_address(0), 0);                                                        \
    }                                                                                                          \
    extern "C" void __tsan_volatile_write##N(void* p) {                                                       \
        kc::on_access(p, N, __builtin_return_address(0), kc::WRITE, false, false, true);                         \
    }
KC_TSAN(1) KC_TSAN(2) KC_TSAN(4) KC_TSAN(8) KC_TSAN(16)
#undef KC_TSAN
extern "C" void __tsan_read_range(void* p, unsigned long n) { kc::on_access(p, unsigned(n), __builtin_return_address(0), kc::READ); }
extern "C" void __tsan_write_range(void* p, unsigned long n) { kc::on_access(p, unsigned(n), __builtin_return_address(0), kc::WRITE); }
extern "C" void __tsan_atomic_thread_fence(int) {   // __threadfence(), __threadfence_system()
    kc::global_fence(kc::SCOPE_DEVICE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#include "kc_tsan_common.h"

// The C library's memory functions, as the kernel's unit calls them (hidden, so the
// kernel's calls bind here): checked as one access of the whole range.
#define KC_NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))
// memset fills eight bytes a store between its unaligned ends: checked mode's own units clear their
// shadows through it too (a 200 KB dynamic shared window's, some 14 MB, at every block's start), and
// a byte a store took a block of the warp-specialised kernel some 5 ms.
extern "C" KC_NO_LIBCALL void* memset(void* d, int c, size_t n) {
    if (n && kc::cur) kc::on_access(d, unsigned(n), __builtin_return_address(0), kc::WRITE);
    typedef uint64_t __attribute__((may_alias)) word;
    unsigned char* p = static_cast<unsigned char*>(d);
    unsigned char b = static_cast<unsigned char>(c);
    size_t i = 0;
    for (; i < n && reinterpret_cast<uintptr_t>(p + i) % 8; ++i) p[i] = b;
    for (word w = 0x0101010101010101ull * b; i + 8 <= n; i += 8) *reinterpret_cast<word*>(p + i) = w;
    for (; i < n; ++i) p[i] = b;
    return d;
}
namespace kc {
// A copy's accesses: n bytes read at s, then written at d, by the code at `where`.
static void on_copy(void* d, const void* s, size_t n, const void* where) {
    on_access(s, unsigned(n), where, READ);
    on_access(d, unsigned(n), where, WRITE);
}
}  // namespace kc
extern "C" KC_NO_LIBCALL void* memmove(void* d, const void* s, size_t n) {
    if (n && kc::cur) kc::on_copy(d, s, n, __builtin_return_address(0));
    unsigned char* p = static_cast<unsigned char*>(d);
    const unsigned char* q = static_cast<const unsigned char*>(s);
    if (p < q) for (size_t i = 0; i < n; ++i) p[i] = q[i];
    else for (size_t i = n; i-- > 0;) p[i] = q[i];
    return d;
}
extern "C" KC_NO_LIBCALL void* memcpy(void* d, const void* s, size_t n) {
    if (n && kc::cur) kc::on_copy(d, s, n, __builtin_return_address(0));
    unsigned char* p = static_cast<unsigned char*>(d);
    const unsigned char* q = static_cast<const unsigned char*>(s);
    for (size_t i = 0; i < n; ++i) p[i] = q[i];
    return d;
}
