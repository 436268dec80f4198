// Checked mode: the hooks g++'s instrumentation calls for every load and store of the
// kernel (ThreadSanitizer's entry points, -fsanitize=thread) and for every subscript of an
// array of known size (-fsanitize=bounds), implemented here instead of by the sanitizers'
// own libraries. The kernel is compiled with its own types; nothing it computes changes.
//
// Provenance. Every array argument lives alone in a slot of 2^slot_shift bytes of address
// space (runtime/cudacheck/cpu/runner.py), at the slot's middle, with nothing else mapped in it; so
// the slot an address falls in names the array it was derived from, however it was
// computed (pointer arithmetic, casts, helpers, structs), and an index past either end is
// reported against that array. Shared variables register as each thread passes their
// declaration (shared_register); dynamic shared memory is one buffer; __device__
// variables are one section. A subscript outside a dimension of a shared or local array
// (Mds[ty][tx + 16] of a 16 x 16 array, which may still land inside its memory) is caught
// by the bounds instrumentation and reported, with every index, at the access it leads to.
//
// Races. Every shared element has a shadow: its last write and up to two reads, each
// with the thread, the barrier interval (`epoch`, advanced when a __syncthreads()
// releases the block), the warp's __syncwarp count, where it is (pc) and the thread's
// position in its own interval (`seq`). Two accesses by different threads conflict when
// at least one writes and nothing orders them: same interval, and not both in one warp
// with a __syncwarp() between. Atomics are read-modify-writes that never conflict with
// each other but do with plain accesses. The hazard is named by program order (seq), not
// by the order this run happened to take, so the verdict is the same under every schedule.
//
// Asynchronous copies (cp.async). A copy in flight marks the shared elements it will write
// (Shadow::pend) when it is issued, after it is checked as a write against this interval's
// accesses; any access of a marked element, by any thread, is reported at once. When its
// thread waits for it the mark goes and the copy is accounted as that thread's write, in
// the interval the wait is in: a reader in another thread then needs a barrier after it.
//
// Warp-collective operations (wmma). Each lane's element accesses are accounted as its own,
// at the line of the call; every element of a tile must lie in the array the tile's pointer
// points into (tile_access). check_collective reports an operation that not all 32 lanes of
// the warp reach, or reach with different arguments (pointer, ldm, layout).
//
// Uninitialized reads. A read of a shared element no thread has written in this block is
// held until the interval ends: if another thread writes it before then, that is a race;
// otherwise it is an uninitialized read.
//
// Which finding is reported. An out-of-bounds access ends the run at once. A race or an
// uninitialized read is held (the first of each) until the barrier interval ends, because
// a divergent barrier, found only then, is often its cause. So at the end of an interval
// the report is, in order: a divergent barrier, the first race, the first uninitialized read.
#pragma once

namespace kc {

struct AccessRec {
    uint32_t epoch;   // barrier interval of the access; 0: none
    uint16_t tid;
    uint16_t wepoch;  // the warp's __syncwarp count at the access
    uint32_t pc;
    uint32_t seq;
    uint8_t atomic;
    uint8_t collective;   // made by a wmma load or store, on behalf of the whole warp
};
// pend: an asynchronous copy (cp.async) into the element is in flight, issued by thread
// `tid` at `pc`: any access before it completes is a race (check_async_issue).
struct Shadow { AccessRec w, r1, r2; struct { uint32_t pc; uint16_t tid; uint8_t set; } pend; };

enum RegionKind : uint8_t { PARAM, SHARED, DYNAMIC, DEVICE, LOCAL };
struct GMem;   // a global memory's shadow (kc_global.h)
struct Region {
    const char* name;
    char* base;
    uint64_t bytes;
    int32_t id;            // parameter index, or SHARED_ID_BASE + shared id; -1 for device variables
    uint8_t kind;
    uint32_t elem_size;    // the declared element's size: the shadow's granule, the unit of indices
    Shadow* shadow;        // shared: one per element
    uint64_t shadow_len;
    uint32_t ndim;
    uint32_t dims[4];
    Region* next;          // the next view sharing a slot (overlapping arguments)
    uint32_t granule;      // shared: bytes per shadow entry (0: elem_size); a struct's is its alignment,
                           // so that threads writing different fields of one struct do not race
    uint8_t* init;         // a whole program's allocation: which bytes were ever written (else null)
    GMem* gm;              // global memory: its race shadow (null: not checked for races)
};

enum Op : uint8_t { READ = 0, WRITE = 1 };

struct CheckState {
    CheckDesc* desc = nullptr;
    uint64_t* counts = nullptr;
    uint32_t epoch = 1;
    int interval_line = 0;
    uint16_t warp_epoch[32] = {};
    bool tracing = false;
    TraceRecord* trace = nullptr;
    uint64_t* trace_count = nullptr;
    uintptr_t lib_base = 0;           // pcs are reported as offsets into the library
    // where arrays are
    uintptr_t slot_lo = 0, slot_span = 0;
    Region params[MAX_PARAMS];
    Region* slots[MAX_SLOTS] = {};
    Region shared[MAX_SHARED_ARRAYS];
    Region* static_shared[MAX_SHARED_ARRAYS] = {};   // registered this launch, by address
    int nstatic = 0;
    uintptr_t shared_lo = ~uintptr_t(0), shared_hi = 0;
    Region* dynamic = nullptr;
    Region device[256];
    int ndevice = 0;
    uintptr_t device_lo = 0, device_hi = 0;
    // findings held until the interval ends
    struct { bool set; const Region* r; uint64_t elem; uint16_t tid; uint32_t pc; } pending{};
    char pending_race[1024] = {};
    const char* via = nullptr;        // an out-of-bounds access made by a wmma call: which, for the message
    bool collective = false;          // the access now accounted is a wmma load's or store's
    bool cas = false;                 // the access now accounted is an atomicCAS
    // a subscript the bounds instrumentation found outside its dimension, reported at the
    // access it leads to (or dropped at the thread's next barrier: forming &a[n] is legal)
    struct { bool set; uint32_t thread; uint32_t line; int64_t index; uint64_t bound; int rank; } sub{};
};
CheckState chk;
}  // namespace kc

#include "kc_global.h"

namespace kc {

inline uint32_t pc_of(const void* pc) { return uint32_t(reinterpret_cast<uintptr_t>(pc) - chk.lib_base - 1); }

// ---- reporting: a finding is written as JSON into the worker's status, then the worker
// ends; runner.py turns it into the matching Python exception.
[[noreturn]] void report(const char* json) {
    snprintf(my_status->message, sizeof my_status->message, "%s", json);
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

static int index_json(char* out, size_t n, const Region* r, uint64_t elem) {
    if (r->ndim <= 1) return snprintf(out, n, "[%llu]", (unsigned long long)elem);
    unsigned long long ix[4];
    for (int k = int(r->ndim) - 1; k >= 0; --k) {
        ix[k] = elem % r->dims[k];
        elem /= r->dims[k];
    }
    ix[0] += elem * r->dims[0];   // past the end: the first index runs on
    int w = snprintf(out, n, "[");
    for (unsigned k = 0; k < r->ndim; ++k) w += snprintf(out + w, n - w, k ? ",%llu" : "%llu", ix[k]);
    return w + snprintf(out + w, n - w, "]");
}

static int dims_json(char* out, size_t n, const Region* r) {
    if (r->ndim <= 1) return snprintf(out, n, "[%llu]", (unsigned long long)(r->bytes / (r->elem_size ? r->elem_size : 1)));
    int w = snprintf(out, n, "[");
    for (unsigned k = 0; k < r->ndim; ++k) w += snprintf(out + w, n - w, k ? ",%u" : "%u", r->dims[k]);
    return w + snprintf(out + w, n - w, "]");
}

static const char* kind_name(const Region* r) {
    return r->kind == PARAM ? "param" : r->kind == DEVICE ? "device" : r->kind == LOCAL ? "local" : "shared";
}

[[noreturn]] static void out_of_bounds(const Region* r, const char* index, const char* dims, unsigned elem_size,
                                       uint32_t pc, uint32_t line, const char* what) {
    char buf[1024];
    finding(buf, sizeof buf, Finding::oob,
             "\"array\":\"%s\",\"space\":\"%s\",\"shared\":%d,\"index\":%s,\"dims\":%s,"
             "\"elem_size\":%u,\"pc\":%u,\"line\":%u,\"op\":\"%s\",\"block\":%u,\"thread\":%u,\"via\":\"%s\"}",
             r ? r->name : "(null)", r ? kind_name(r) : "null", r && (r->kind == SHARED || r->kind == DYNAMIC), index,
             dims, elem_size, pc, line, what, my_status->block, cur->linear, chk.via ? chk.via : "");
    report(buf);
}

// An access of `size` bytes at byte offset off (may be negative) outside region r.
[[noreturn]] static void outside(const Region* r, int64_t off, unsigned size, uint32_t pc, const char* what) {
    char ix[256], dims[128];
    unsigned unit = r->kind == SHARED && r->elem_size ? r->elem_size : size;   // else: the accessed type's
    int64_t idx = off >= 0 ? off / int64_t(unit) : -((-off + int64_t(unit) - 1) / int64_t(unit));
    if (r->ndim >= 2 && idx >= 0) index_json(ix, sizeof ix, r, uint64_t(idx));
    else snprintf(ix, sizeof ix, "[%lld]", (long long)idx);
    if (r->ndim >= 2) dims_json(dims, sizeof dims, r);
    else snprintf(dims, sizeof dims, "[%llu]", (unsigned long long)(r->bytes / unit));
    out_of_bounds(r, ix, dims, unit, pc, 0, what);
}

// The section of static __shared__ arrays and the guard after it (kc_device.ld).
extern "C" char __start_kc_shared[] __attribute__((weak));
extern "C" char __stop_kc_shared[] __attribute__((weak));
inline uintptr_t kc_shared_lo() { return reinterpret_cast<uintptr_t>(__start_kc_shared); }
inline uintptr_t kc_shared_span() {   // the section ends with its 4096-byte guard
    return __start_kc_shared ? uintptr_t(__stop_kc_shared - __start_kc_shared) : 0;
}

// ---- the accounting of one access --------------------------------------------------
// A wmma load or store is the whole warp's access: which lane touches which element is
// unspecified in CUDA, so it is ordered with another access of that warp (its own lane's
// included) only by a __syncwarp() or a barrier, except with the warp's other wmma accesses.
static bool ordered(const AccessRec& a, const Thread* t, bool atomic) {
    if (a.epoch != chk.epoch || (a.atomic && atomic)) return true;
    bool same_warp = a.tid / 32 == t->linear / 32;
    if (same_warp && a.wepoch != chk.warp_epoch[t->linear / 32]) return true;
    if (a.collective || chk.collective) return same_warp && a.collective && chk.collective;
    return a.tid == t->linear;
}

static uint64_t element_of(const Region* r, uint64_t granule_index) {
    return r->granule ? granule_index * r->granule / r->elem_size : granule_index;
}

static void race(const Region* r, uint64_t elem, const char* hazard, const AccessRec& other, const char* other_op,
                 const char* this_op, uint32_t pc) {
    if (chk.pending_race[0]) return;
    char ix[128], dims[64];
    index_json(ix, sizeof ix, r, element_of(r, elem));
    dims_json(dims, sizeof dims, r);
    finding(chk.pending_race, sizeof chk.pending_race, Finding::race,
             "\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"hazard\":\"%s\",\"block\":%u,"
             "\"thread\":%u,\"pc\":%u,\"op\":\"%s\",\"other_thread\":%u,\"other_pc\":%u,\"other_op\":\"%s\","
             "\"interval_line\":%d}",
             r->name, ix, dims, hazard, my_status->block, cur->linear, pc, this_op, other.tid, other.pc, other_op,
             chk.interval_line);
}

static void trace(const Region* r, int64_t elem, uint8_t width, uint32_t pc, Op op) {
    CheckDesc* d = chk.desc;
    if (d->trace_threads && !d->trace_threads[cur->linear]) return;
    uint64_t n = (*chk.trace_count)++;
    if (n < d->trace_capacity) chk.trace[n] = TraceRecord{my_status->block, chk.epoch, cur->linear, r->id, elem, pc, op, width, {}};
}

[[noreturn]] static void async_race(const Region* r, uint64_t elem, const Shadow& s, uint32_t pc, const char* op) {
    char buf[1024], ix[128], dims[64];
    index_json(ix, sizeof ix, r, element_of(r, elem));
    dims_json(dims, sizeof dims, r);
    finding(buf, sizeof buf, Finding::async_race,
             "\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"block\":%u,\"thread\":%u,"
             "\"pc\":%u,\"op\":\"%s\",\"other_thread\":%u,\"other_pc\":%u}",
             r->name, ix, dims, my_status->block, cur->linear, pc, op, s.pend.tid, s.pend.pc);
    report(buf);
}

// probe: check the access against the element's history without recording it (an
// asynchronous copy as it is issued: it writes later, at its wait).
static void shared_element(const Region* r, uint64_t elem, uint32_t pc, Op op, bool atomic, bool atomic_reads,
                           bool probe = false) {
    Shadow& s = r->shadow[elem];
    Thread* t = cur;
    if (s.pend.set) async_race(r, elem, s, pc, probe ? "copy" : op == READ ? "read" : "write");
    AccessRec me{chk.epoch, uint16_t(t->linear), chk.warp_epoch[t->linear / 32], pc, t->seq, atomic, chk.collective};
    if (op == READ || atomic_reads) {
        if (s.w.epoch && !ordered(s.w, t, atomic))
            race(r, elem, s.w.seq < me.seq ? "RAW" : "WAR", s.w, s.w.atomic ? "atomic" : "write",
                 atomic ? "atomic" : "read", pc);
        if (!s.w.epoch && !chk.pending.set && !probe) chk.pending = {true, r, elem, uint16_t(t->linear), pc};
    }
    if (op == READ) {
        // Keep up to two readers of this interval; a slot is reused when it is from an
        // older interval or the same thread.
        if (!s.r1.epoch || s.r1.epoch != chk.epoch || s.r1.tid == me.tid) s.r1 = me;
        else if (!s.r2.epoch || s.r2.epoch != chk.epoch || s.r2.tid == me.tid) s.r2 = me;
        return;
    }
    if (s.w.epoch && !ordered(s.w, t, atomic))
        race(r, elem, "WAW", s.w, s.w.atomic ? "atomic" : "write", atomic ? "atomic" : "write", pc);
    for (const AccessRec* rd : {&s.r1, &s.r2})
        if (rd->epoch && !ordered(*rd, t, atomic))
            race(r, elem, rd->seq < me.seq ? "WAR" : "RAW", *rd, rd->atomic ? "atomic" : "read",
                 atomic ? "atomic" : "write", pc);
    if (!probe) s.w = me;
}

static Region* find_static_shared(uintptr_t a) {
    Region* before = nullptr;
    for (int i = 0; i < chk.nstatic; ++i) {
        Region* r = chk.static_shared[i];
        uintptr_t b = reinterpret_cast<uintptr_t>(r->base);
        if (a >= b && a < b + r->bytes) return r;
        if (b <= a && (!before || reinterpret_cast<uintptr_t>(before->base) < b)) before = r;
    }
    return before;
}

static Region* find_device(uintptr_t a) {
    Region* before = nullptr;
    for (int i = 0; i < chk.ndevice; ++i) {
        Region* r = &chk.device[i];
        uintptr_t b = reinterpret_cast<uintptr_t>(r->base);
        if (a >= b && a < b + r->bytes) return r;
        if (b <= a && (!before || reinterpret_cast<uintptr_t>(before->base) < b)) before = r;
    }
    return before;
}

// A subscript found outside its dimension, now met by the access it leads to (in `r`, or
// in a thread's local memory when r is null).
[[noreturn]] static void bad_subscript(const Region* r, uintptr_t a, unsigned size, uint32_t pc, Op op) {
    const char* what = op == READ ? "read" : "write";
    char ix[256], dims[128];
    if (r && r->kind == SHARED && r->ndim >= 1) {
        // Rebuild the indices as written: the bad one from the instrumentation, the others
        // from the address (they are within their dimensions).
        int k = int(r->ndim) - chk.sub.rank;   // the dimension that was out of range
        if (k < 0) k = 0;
        uint64_t stride = 1;
        for (unsigned j = k + 1; j < r->ndim; ++j) stride *= r->dims[j];
        int64_t flat = int64_t(a - reinterpret_cast<uintptr_t>(r->base)) / int64_t(r->elem_size);
        int64_t rest = flat - chk.sub.index * int64_t(stride);
        long long idx[4];
        for (int j = int(r->ndim) - 1; j >= 0; --j) {
            if (j == k) {   // its digit is now 0
                rest /= int64_t(r->dims[j]);
                continue;
            }
            int64_t d = r->dims[j];
            idx[j] = ((rest % d) + d) % d;
            rest = (rest - idx[j]) / d;
        }
        idx[k] = chk.sub.index;
        int w = snprintf(ix, sizeof ix, "[");
        for (unsigned j = 0; j < r->ndim; ++j) w += snprintf(ix + w, sizeof ix - w, j ? ",%lld" : "%lld", idx[j]);
        snprintf(ix + w, sizeof ix - w, "]");
        dims_json(dims, sizeof dims, r);
        out_of_bounds(r, ix, dims, r->elem_size, pc, chk.sub.line, what);
    }
    // A local array: its accesses are not instrumented (the compiler keeps them on the
    // thread's stack or in registers), so the subscript itself is the finding.
    static Region local{"(local array)", nullptr, 0, -1, LOCAL, 0, nullptr, 0, 1, {0}, nullptr};
    snprintf(ix, sizeof ix, "[%lld]", (long long)chk.sub.index);
    snprintf(dims, sizeof dims, "[%llu]", (unsigned long long)chk.sub.bound);
    (void)what;
    out_of_bounds(&local, ix, dims, 0, 0, chk.sub.line, "index");
}

// The static shared array a bad subscript was taken of: the nearest one at or below the
// address whose dimension has the subscript's bound (the address may be past its end).
static Region* subscripted(uintptr_t a) {
    Region* best = nullptr;
    for (int i = 0; i < chk.nstatic; ++i) {
        Region* r = chk.static_shared[i];
        int k = int(r->ndim) - chk.sub.rank;
        if (uintptr_t(r->base) > a || k < 0 || r->dims[k] != chk.sub.bound) continue;
        if (!best || uintptr_t(best->base) < uintptr_t(r->base)) best = r;
    }
    return best;
}

// initcheck for a whole program's device memory: a read of bytes that no copy, memset or
// kernel has written is reported; a write marks them written (in memory the host shares).
static void global_init(const Region* r, int64_t off, unsigned size, uint32_t pc, bool reads, bool writes) {
    uint8_t* s = r->init + off;
    if (reads)
        for (unsigned k = 0; k < size; ++k)
            if (!s[k]) {
                char buf[512];
                uint64_t elem = r->elem_size ? r->elem_size : 1;
                finding(buf, sizeof buf, Finding::uninit,
                         "\"space\":\"global\",\"array\":\"%s\",\"index\":[%llu],\"dims\":[%llu],"
                         "\"block\":%u,\"thread\":%u,\"pc\":%u}",
                         r->name, (unsigned long long)((uint64_t(off) + k) / elem),
                         (unsigned long long)(r->bytes / elem), my_status->block, cur->linear, pc);
                report(buf);
            }
    if (writes)
        for (unsigned k = 0; k < size; ++k) s[k] = 1;
}

// Every load and store of the kernel comes here (through the __tsan_* entry points).
static inline void on_access(const void* p, unsigned size, const void* ret, Op op, bool atomic = false,
                             bool atomic_reads = false, bool is_volatile = false) {
    if (!cur) return;   // not a kernel's thread: a whole program's host code, a library's initializers
    if (!atomic && !is_volatile) cur->polls = 0;   // not only polling (kc_runtime.cpp: poll)
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
        return;   // the thread's own stack, the runtime's data: not checked
    }
    uint32_t pc = pc_of(ret);
    // A bad subscript of a shared array is reported at its access; one of a local array
    // (whose accesses are not instrumented) when the interval ends.
    if (sub && (r->kind == SHARED || r->kind == DYNAMIC)) {
        Region* s = subscripted(a);
        if (s) bad_subscript(s, a, size, pc, op);
    }
    int64_t off = int64_t(a) - int64_t(uintptr_t(r->base));
    if (off < 0 || uint64_t(off) + size > r->bytes) outside(r, off, size, pc, op == READ ? "read" : "write");
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
        uint64_t elem = r->elem_size ? r->elem_size : size;
        trace(r, int64_t(uint64_t(off) / elem), uint8_t(size > elem ? size / elem : 1), pc, op);
    }
    uint64_t granule = is_shared ? (r->granule ? r->granule : r->elem_size) : size;
    if (!is_shared) return;
    for (uint64_t e = uint64_t(off) / granule; e <= (uint64_t(off) + size - 1) / granule; ++e)
        shared_element(r, e, pc, op, atomic, atomic_reads);
    cur->seq++;
}

void atomic_access(void* addr, unsigned size, void* pc, bool reads, bool cas) {
    chk.cas = cas;
    on_access(addr, size, pc, WRITE, true, reads);
    chk.cas = false;
}

static Shadow* shadow_for(Region* r, uint64_t n) {
    if (r->shadow_len < n) {
        free(r->shadow);
        r->shadow = static_cast<Shadow*>(calloc(n ? n : 1, sizeof(Shadow)));
        r->shadow_len = n;
    }
    return r->shadow;
}

void shared_region(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims, bool dynamic) {
    if (id < 0 || id >= MAX_SHARED_ARRAYS) return;
    Region* r = &chk.shared[id];
    if (r->base == addr && r->bytes == bytes && r->name) return;   // registered already in this launch
    uint32_t esize = uint32_t(elem ? elem : 1);
    *r = Region{name ? name : chk.desc->shared_names[id], static_cast<char*>(addr), bytes, SHARED_ID_BASE + id,
                uint8_t(dynamic ? DYNAMIC : SHARED), esize, r->shadow, r->shadow_len, uint32_t(rank > 0 ? rank : 1),
                {1, 1, 1, 1}, nullptr};
    for (int k = 0; k < rank && k < 4; ++k) r->dims[k] = dims[k];
    if (rank == 0) r->dims[0] = 1;
    r->granule = granule && granule < esize ? uint32_t(granule) : 0;
    uint64_t shadows = bytes / (r->granule ? r->granule : esize);
    shadow_for(r, shadows);
    memset(r->shadow, 0, sizeof(Shadow) * shadows);
    uint32_t* out = chk.desc->shared_dims + 3 * id;
    for (int k = 0; k < 3; ++k) out[k] = k < rank ? dims[k] : (k == 0 && !dynamic ? 1 : 0);
    if (dynamic) {
        out[0] = uint32_t(bytes / esize);
        chk.dynamic = r;
        return;
    }
    chk.static_shared[chk.nstatic++] = r;
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (a < chk.shared_lo) chk.shared_lo = a;
    if (a + bytes > chk.shared_hi) chk.shared_hi = a + bytes;
}

// ---- warp-collective operations and asynchronous copies (kc_warp.h) ----------------------

// The region an address lies in, as on_access finds it; null for memory checked mode does not
// check (a thread's stack). Reports a null or unmapped pointer.
static Region* region_at(const void* p, unsigned size, uint32_t pc, Op op) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const char* what = op == READ ? "read" : "write";
    if (a - chk.slot_lo < chk.slot_span) {
        Region* r = chk.slots[(a - chk.slot_lo) >> chk.desc->slot_shift];
        if (!r) out_of_bounds(nullptr, "[0]", "[0]", size, pc, 0, what);
        for (Region* v = r; v; v = v->next)
            if (a >= uintptr_t(v->base) && a + size <= uintptr_t(v->base) + v->bytes) return v;
        return r;
    }
    if (chk.dynamic && a - uintptr_t(chk.dynamic->base) < DYNAMIC_SHARED_CAPACITY + 4096) return chk.dynamic;
    if (a - chk.shared_lo < chk.shared_hi - chk.shared_lo || a - kc_shared_lo() < kc_shared_span())
        return find_static_shared(a);
    if (a - chk.device_lo < chk.device_hi - chk.device_lo) return find_device(a);
    if (a < 65536) out_of_bounds(nullptr, "[0]", "[0]", size, pc, 0, what);
    return nullptr;
}

static bool is_shared(const Region* r) { return r && (r->kind == SHARED || r->kind == DYNAMIC); }

void tile_access(const Collective* c, const void* addr, unsigned size, bool write, int rows, int cols, int row,
                 int col) {
    if (!cur) return;
    uint32_t pc = pc_of(c->pc);
    Op op = write ? WRITE : READ;
    Region* r = region_at(reinterpret_cast<const void*>(c->key[0]), 1, pc, op);
    if (r) {
        int64_t off = int64_t(reinterpret_cast<uintptr_t>(addr)) - int64_t(uintptr_t(r->base));
        if (off < 0 || uint64_t(off) + size > r->bytes) {
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

// The shadow entries of shared region r that bytes [a, a + size) cover.
template <class F>
static void each_shadow(const Region* r, uintptr_t a, unsigned size, F f) {
    uint64_t off = a - uintptr_t(r->base), granule = r->granule ? r->granule : r->elem_size;
    for (uint64_t e = off / granule; e <= (off + size - 1) / granule; ++e) f(e, r->shadow[e]);
}

void check_async_issue(const AsyncCopy& c) {
    uint32_t pc = pc_of(c.pc);
    const char* what = "__pipeline_memcpy_async";
    if (c.size > c.zfill) {   // the bytes it reads
        Region* s = region_at(c.src, c.size - c.zfill, pc, READ);
        if (is_shared(s)) operand_error("src_not_global", what, c.src, 0, 0, c.line);
        on_access(c.src, c.size - c.zfill, c.pc, READ);
    }
    Region* d = region_at(c.dst, c.size, pc, WRITE);
    if (!is_shared(d)) operand_error("dst_not_shared", what, c.dst, 0, 0, c.line);
    int64_t off = int64_t(reinterpret_cast<uintptr_t>(c.dst)) - int64_t(uintptr_t(d->base));
    if (off < 0 || uint64_t(off) + c.size > d->bytes) outside(d, off, c.size, pc, "write");
    each_shadow(d, uintptr_t(c.dst), c.size, [&](uint64_t e, Shadow& sh) {
        shared_element(d, e, pc, WRITE, false, false, true);
        sh.pend = {pc, uint16_t(cur->linear), 1};
    });
}

void check_async_complete(const AsyncCopy& c) {
    Region* d = region_at(c.dst, c.size, pc_of(c.pc), WRITE);
    each_shadow(d, uintptr_t(c.dst), c.size, [&](uint64_t, Shadow& sh) { sh.pend = {}; });
    on_access(c.dst, c.size, c.pc, WRITE);
}

// A collective (wmma) operation that not every lane of warp w reaches as one call with one
// set of arguments: where each lane is, as the finding's JSON.
[[noreturn]] static void collective_misuse(unsigned w, const Thread& t, unsigned arrived, const char* problem,
                                           unsigned lane, int key) {
    static char buf[sizeof(WorkerStatus::message)];
    const Collective* c = reinterpret_cast<const Collective*>(t.value);
    unsigned lo = w * 32, n = sched.nthreads - lo < 32 ? sched.nthreads - lo : 32;
    int k = finding(buf, sizeof buf, Finding::collective,
                     "\"problem\":\"%s\",\"what\":\"%s\",\"block\":%u,\"warp\":%u,"
                     "\"line\":%d,\"arrived\":%u,\"lanes\":%u,\"lane\":%u,\"key\":%d,\"states\":\"",
                     problem, c->what, my_status->block, w, t.line, arrived, n, lane, key);
    for (unsigned l = 0; l < n; ++l) {
        const Thread& u = sched.threads[lo + l];
        buf[k++] = (arrived >> l) & 1u ? 'C' : u.state == AT_SYNCTHREADS ? 'S' : u.state == AT_WARP ? 'W'
                   : u.state == EXITED ? 'E' : 'R';
    }
    k += snprintf(buf + k, sizeof buf - k, "\",\"lines\":[");
    for (unsigned l = 0; l < n; ++l) {
        const Thread& u = sched.threads[lo + l];
        k += snprintf(buf + k, sizeof buf - k, l ? ",%d" : "%d", u.state == EXITED ? u.exit_line : u.line);
    }
    k += snprintf(buf + k, sizeof buf - k, "],\"values\":[");
    for (unsigned l = 0; l < n && key >= 0; ++l) {
        const Thread& u = sched.threads[lo + l];
        unsigned long long v = (arrived >> l) & 1u ? reinterpret_cast<const Collective*>(u.value)->key[key] : 0;
        k += snprintf(buf + k, sizeof buf - k, l ? ",%llu" : "%llu", v);
    }
    snprintf(buf + k, sizeof buf - k, "]}");
    report(buf);
}

static unsigned collective_arrivals(unsigned w, const Thread& t) {
    unsigned lo = w * 32, m = 0;
    CollectiveRun run = reinterpret_cast<const Collective*>(t.value)->run;
    for (unsigned l = 0; l < 32 && lo + l < sched.nthreads; ++l) {
        const Thread& u = sched.threads[lo + l];
        if (u.state == AT_WARP && u.op == COLLECTIVE && u.line == t.line &&
            reinterpret_cast<const Collective*>(u.value)->run == run)
            m |= 1u << l;
    }
    return m;
}

// The group of warp w at a collective is about to be released: all 32 lanes must be at the
// one call, with the same arguments.
void check_collective(unsigned w, unsigned group) {
    unsigned lo = w * 32;
    const Thread& t = sched.threads[lo + __builtin_ctz(group)];
    const Thread* lead = &t;
    for (unsigned l = 0; l < 32; ++l)   // the call most lanes are at names the operation
        if ((group >> l) & 1u && sched.threads[lo + l].op == COLLECTIVE) { lead = &sched.threads[lo + l]; break; }
    unsigned arrived = collective_arrivals(w, *lead);
    if (sched.nthreads - lo < 32) collective_misuse(w, *lead, arrived, "short_warp", 0, -1);
    if (arrived != 0xffffffffu) collective_misuse(w, *lead, arrived, "partial", 0, -1);
    const Collective* first = reinterpret_cast<const Collective*>(lead->value);
    for (unsigned l = 0; l < 32; ++l) {
        const Collective* c = reinterpret_cast<const Collective*>(sched.threads[lo + l].value);
        for (int k = 0; k < 3; ++k)
            if (c->key[k] != first->key[k]) collective_misuse(w, *lead, arrived, "arguments", l, k);
    }
}

// ---- hooks the scheduler calls ----------------------------------------------------------
void check_worker_start(const LaunchDesc* d, unsigned w) {
    chk.desc = d->check;
    chk.counts = chk.desc->counts + uint64_t(w) * chk.desc->counts_stride;
    chk.trace = chk.desc->trace + uint64_t(w) * chk.desc->trace_capacity;
    chk.trace_count = chk.desc->trace_count + w;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&check_worker_start), &info)) chk.lib_base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    CheckDesc* c = chk.desc;
    chk.slot_lo = c->slot_base;
    chk.slot_span = uint64_t(c->nslots) << c->slot_shift;
    if (c->nallocs) {   // a whole program: one region per allocation, each alone in its slot
        static Region allocs[MAX_SLOTS];
        for (uint32_t i = 0; i < c->nallocs && i < uint32_t(MAX_SLOTS); ++i) {
            const Allocation& m = c->allocs[i];
            uint32_t esize = uint32_t(m.elem_size ? m.elem_size : 1);
            allocs[i] = Region{m.name, reinterpret_cast<char*>(m.base), m.bytes, int32_t(m.param), PARAM, esize,
                               nullptr, 0, 1, {uint32_t(m.bytes / esize), 1, 1, 1}, nullptr, 0, m.init};
            uint64_t s = (m.base - chk.slot_lo) >> c->slot_shift;
            if (s < c->nslots && s < uint64_t(MAX_SLOTS)) chk.slots[s] = &allocs[i];
        }
    }
    for (uint32_t i = 0; i < c->nparams && i < uint32_t(MAX_PARAMS) && !c->nallocs; ++i) {
        if (!c->extents[i]) continue;
        char* base = *static_cast<char**>(d->args[i]);
        Region* r = &chk.params[i];
        *r = Region{c->names[i], base, c->extents[i], int32_t(i), PARAM, c->elem_sizes[i], nullptr, 0, 1,
                    {uint32_t(c->extents[i] / (c->elem_sizes[i] ? c->elem_sizes[i] : 1)), 1, 1, 1}, nullptr};
        uint64_t s = (reinterpret_cast<uintptr_t>(base) - chk.slot_lo) >> c->slot_shift;
        if (s < c->nslots) {
            r->next = chk.slots[s];
            chk.slots[s] = r;
        }
    }
    chk.device_lo = c->device_lo;
    chk.device_hi = c->device_hi;
    for (uint32_t i = 0; i < c->ndevice && i < 256; ++i)
        chk.device[chk.ndevice++] = Region{c->device_names[i], reinterpret_cast<char*>(c->device_vars[2 * i]),
                                           c->device_vars[2 * i + 1], -1, DEVICE,
                                           c->device_elem_sizes[i] ? c->device_elem_sizes[i] : 1, nullptr, 0, 1,
                                           {0}, nullptr};
    Region* globals[MAX_SLOTS + MAX_PARAMS + 256];
    int n = 0;
    for (uint32_t s = 0; s < c->nslots && s < uint32_t(MAX_SLOTS); ++s)
        for (Region* v = chk.slots[s]; v; v = v->next) globals[n++] = v;
    for (int i = 0; i < chk.ndevice; ++i) globals[n++] = &chk.device[i];
    global_worker_start(c, globals, n);
}

void check_block_start(uint32_t block) {
    global_block_start(block);
    chk.epoch = 1;
    chk.interval_line = 0;
    memset(chk.warp_epoch, 0, sizeof chk.warp_epoch);
    chk.pending.set = false;
    chk.pending_race[0] = 0;
    chk.sub.set = false;
    chk.tracing = chk.desc->trace_blocks && chk.desc->trace_blocks[block];
    for (int i = 0; i < MAX_SHARED_ARRAYS; ++i)
        if (chk.shared[i].shadow) memset(chk.shared[i].shadow, 0, sizeof(Shadow) * chk.shared[i].shadow_len);
    for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].exit_line = sched.threads[i].seq = 0;
}

// The interval ends (a barrier releases or the block is done): a read still pending is
// an uninitialized read.
void check_interval_end() {
    global_interval_end();
    if (chk.sub.set) {   // a local array's bad subscript, with no instrumented access since
        cur = &sched.threads[chk.sub.thread];
        bad_subscript(nullptr, 0, 0, 0, WRITE);
    }
    if (chk.pending_race[0]) report(chk.pending_race);
    if (!chk.pending.set) return;
    char buf[512], ix[128], dims[64];
    index_json(ix, sizeof ix, chk.pending.r, element_of(chk.pending.r, chk.pending.elem));
    dims_json(dims, sizeof dims, chk.pending.r);
    finding(buf, sizeof buf, Finding::uninit,
             "\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u}",
             chk.pending.r->name, ix, dims, my_status->block, chk.pending.tid, chk.pending.pc);
    report(buf);
}

void check_warp_released(unsigned w, unsigned) { chk.warp_epoch[w]++; }

[[noreturn]] static void warp_misuse(unsigned w, unsigned mask, int line, const char* problem, unsigned lane) {
    char buf[512];
    finding(buf, sizeof buf, Finding::warp,
             "\"block\":%u,\"warp\":%u,\"mask\":%u,\"line\":%d,\"problem\":\"%s\",\"lane\":%u}",
             my_status->block, w, mask, line, problem, lane);
    report(buf);
}

// A warp operation is about to release: every lane of its mask must be in it, doing the
// same operation, and a shuffle must read lanes that take part.
void check_warp_group(unsigned w, unsigned mask, int line) {
    unsigned lo = w * 32;
    for (unsigned l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1u)) continue;
        if (lo + l >= sched.nthreads) continue;   // lanes past the block's last thread do not exist
        const Thread& u = sched.threads[lo + l];
        if (u.state == EXITED) warp_misuse(w, mask, line, "exited", l);
        if (u.line != line || u.op != sched.threads[lo + __builtin_ctz(mask)].op) warp_misuse(w, mask, line, "different", l);
    }
    for (unsigned l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1u)) continue;
        const Thread& t = sched.threads[lo + l];
        if (t.op < SHFL_IDX || t.op > SHFL_XOR) continue;
        unsigned seg = l & ~unsigned(t.width - 1), src = l;
        if (t.op == SHFL_IDX) src = seg + (unsigned(t.arg) & unsigned(t.width - 1));
        else if (t.op == SHFL_UP && l >= seg + unsigned(t.arg)) src = l - t.arg;
        else if (t.op == SHFL_DOWN && l + unsigned(t.arg) < seg + unsigned(t.width)) src = l + t.arg;
        else if (t.op == SHFL_XOR && (((l ^ unsigned(t.arg)) & ~unsigned(t.width - 1)) == seg)) src = l ^ unsigned(t.arg);
        if (src < 32 && !((mask >> src) & 1u)) warp_misuse(w, mask, line, "source", src);
    }
}

// Before the block's waiting threads are released: they must all wait at one
// __syncthreads(), and none may have exited. Otherwise report where each thread is.
void check_barrier(int end_line) {
    if (chk.sub.set) check_interval_end();
    int line = -1;
    bool divergent = false;
    for (unsigned i = 0; i < sched.nthreads && !divergent; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS) divergent = true;
        else if (line < 0) line = t.line;
        else if (t.line != line) divergent = true;
    }
    if (divergent)   // a warp waiting at a wmma call that some of its lanes never reach
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            const Thread& t = sched.threads[i];
            if (t.state == AT_WARP && t.op == COLLECTIVE)
                collective_misuse(i / 32, t, collective_arrivals(i / 32, t), sched.nthreads - i / 32 * 32 < 32
                                  ? "short_warp" : "partial", 0, -1);
        }
    if (!divergent) {
        check_interval_end();
        for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].seq = 0;
        chk.epoch++;
        chk.interval_line = line;
        return;
    }
    static char buf[sizeof(WorkerStatus::message)];
    int k = finding(buf, sizeof buf, Finding::divergence, "\"block\":%u,\"end_line\":%d,\"states\":\"",
                     my_status->block, end_line);
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        uint8_t s = sched.threads[i].state;
        buf[k++] = s == AT_SYNCTHREADS ? 'S' : s == AT_WARP ? 'W' : s == EXITED ? 'E' : 'R';
    }
    k += snprintf(buf + k, sizeof buf - k, "\",\"lines\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(sizeof buf) - 16; ++i) {
        const Thread& t = sched.threads[i];
        k += snprintf(buf + k, sizeof buf - k, i ? ",%d" : "%d", t.state == EXITED ? t.exit_line : t.line);
    }
    snprintf(buf + k, sizeof buf - k, "]}");
    report(buf);
}

}  // namespace kc

// ---- the instrumentation's entry points -------------------------------------------------
// g++ -fsanitize=thread calls these around every load and store of the kernel's unit;
// -fsanitize=bounds calls the handler for a subscript outside an array's dimension.
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
extern "C" void __tsan_atomic_thread_fence(int) {   // __threadfence()
    kc::global_fence();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#include "kc_tsan_common.h"

// The C library's memory functions, as the kernel's unit calls them (hidden, so the
// kernel's calls bind here): checked as one access of the whole range.
#define KC_NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))
extern "C" KC_NO_LIBCALL void* memset(void* d, int c, size_t n) {
    if (n && kc::cur) kc::on_access(d, unsigned(n), __builtin_return_address(0), kc::WRITE);
    unsigned char* p = static_cast<unsigned char*>(d);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(c);
    return d;
}
extern "C" KC_NO_LIBCALL void* memmove(void* d, const void* s, size_t n) {
    if (n && kc::cur) {
        kc::on_access(s, unsigned(n), __builtin_return_address(0), kc::READ);
        kc::on_access(d, unsigned(n), __builtin_return_address(0), kc::WRITE);
    }
    unsigned char* p = static_cast<unsigned char*>(d);
    const unsigned char* q = static_cast<const unsigned char*>(s);
    if (p < q) for (size_t i = 0; i < n; ++i) p[i] = q[i];
    else for (size_t i = n; i-- > 0;) p[i] = q[i];
    return d;
}
extern "C" KC_NO_LIBCALL void* memcpy(void* d, const void* s, size_t n) {
    if (n && kc::cur) {
        kc::on_access(s, unsigned(n), __builtin_return_address(0), kc::READ);
        kc::on_access(d, unsigned(n), __builtin_return_address(0), kc::WRITE);
    }
    unsigned char* p = static_cast<unsigned char*>(d);
    const unsigned char* q = static_cast<const unsigned char*>(s);
    for (size_t i = 0; i < n; ++i) p[i] = q[i];
    return d;
}

// -fsanitize=bounds: UBSan's data layout (stable across GCC and clang).
struct KcSourceLocation { const char* file; uint32_t line, column; };
struct KcTypeDescriptor { uint16_t kind, info; char name[1]; };
struct KcOutOfBoundsData { KcSourceLocation loc; const KcTypeDescriptor* array; const KcTypeDescriptor* index; };
extern "C" void __ubsan_handle_out_of_bounds(KcOutOfBoundsData* d, uintptr_t index) {
    if (!kc::cur) return;
    int64_t v = int64_t(index);
    unsigned bits = 1u << (d->index->info >> 1);
    if (!(d->index->info & 1) || bits >= 64) v = bits >= 64 ? int64_t(index) : int64_t(index & ((1ull << bits) - 1));
    else if (bits < 64 && (index >> (bits - 1)) & 1) v = int64_t(index | ~((1ull << bits) - 1));
    // The array type's name, "float [8][16]": its rank says which dimension was out of range.
    int rank = 0;
    unsigned long long bound = 0;
    for (const char* c = d->array->name; *c; ++c)
        if (*c == '[') {
            if (!rank) bound = strtoull(c + 1, nullptr, 10);
            ++rank;
        }
    kc::chk.sub = {true, kc::cur->linear, d->loc.line, v, bound, rank};
}
extern "C" void __ubsan_handle_out_of_bounds_abort(KcOutOfBoundsData* d, uintptr_t index) {
    __ubsan_handle_out_of_bounds(d, index);
}
