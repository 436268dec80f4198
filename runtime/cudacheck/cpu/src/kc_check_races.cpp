// Checked mode's race check on shared memory (kc_check.h), as compute-sanitizer's racecheck.
//
// Races. Every shared element has a shadow (kc_check.h: Shadow): its last write and up to
// two reads, each with the thread, the barrier interval (`epoch`, advanced when a
// __syncthreads() releases the block), the warp's __syncwarp count, where it is (pc) and the
// thread's position in its own interval (`seq`). Two accesses by different threads conflict
// when at least one writes and nothing orders them: same interval, and not both in one warp
// with a __syncwarp() between. Atomics are read-modify-writes that never conflict with
// each other but do with plain accesses. The hazard is named by program order (seq), not
// by the order this run happened to take, so the verdict is the same under every schedule.
// A race is held until the interval ends (kc_check_core.cpp: check_interval_end).
//
// Mbarriers (inline PTX, kc_ptx.cpp) order accesses within an interval: what a thread did
// before it arrived on a barrier is ordered before what a thread does once its wait has seen
// that phase complete (see "mbarriers" below).
//
// Asynchronous copies (cp.async). A copy in flight marks the shared elements it will write
// (Shadow::pend) when it is issued, after it is checked as a write against this interval's
// accesses; any access of a marked element, by any thread, is reported at once. When its
// thread waits for it the mark goes and the copy is accounted as that thread's write, in
// the interval the wait is in: a reader in another thread then needs a barrier after it.
#include <initializer_list>

#include "kc_check.h"

namespace kc {

// ---- mbarriers ---------------------------------------------------------------------------------
// Each thread knows, of every other thread, how many of its accesses of this interval (its
// `seq`) are ordered before its own next ones: a vector clock over seq, kept from a block's
// first mbarrier on. A barrier gathers the clocks of the threads arriving on its current phase
// and, as phases complete, of all its completed phases; a thread whose wait sees a phase
// complete takes in the latter. Rows and clocks of an older interval or block count as zeros.
// The global memory check (kc_check_global_races.cpp) orders a block's global accesses by
// these clocks too (clock_orders) and releases a fencing thread's clock (clock_copy); a
// thread arriving or taking in a clock calls it first (global_sync).
struct BarrierClock {
    const void* bar;
    uint64_t arrived_at, completed_at;   // the interval each clock is of
    uint32_t* arrived;
    uint32_t* completed;
};
static struct {
    unsigned n = 0;             // threads of the block: each clock's length
    uint32_t* known = nullptr;  // n x n: row t, column u: accesses of u ordered before t's next
    uint64_t* row_at = nullptr; // the interval of each row
    BarrierClock bars[64];
} mb;

static uint64_t interval() { return uint64_t(my_status->block) << 32 | chk.epoch; }

static uint32_t* current(uint32_t* c, uint64_t& at) {   // clock c, zeros if it is of an older interval
    if (at != interval()) memset(c, 0, sizeof(uint32_t) * mb.n);
    at = interval();
    return c;
}

static void join(uint32_t* into, const uint32_t* from) {
    for (unsigned u = 0; u < mb.n; ++u) into[u] = into[u] > from[u] ? into[u] : from[u];
}

static uint32_t* row(unsigned t) { return current(mb.known + size_t(t) * mb.n, mb.row_at[t]); }

static BarrierClock& barrier_clock(const void* bar) {
    if (mb.n != sched.nthreads) {   // the first mbarrier of a launch (every block has as many threads)
        mb.n = sched.nthreads;
        free(mb.known);
        free(mb.row_at);
        mb.known = static_cast<uint32_t*>(calloc(size_t(mb.n) * mb.n, sizeof(uint32_t)));
        mb.row_at = static_cast<uint64_t*>(calloc(mb.n, sizeof(uint64_t)));
        for (BarrierClock& b : mb.bars) {
            free(b.arrived);
            free(b.completed);
            b = BarrierClock{nullptr, 0, 0, static_cast<uint32_t*>(calloc(mb.n, sizeof(uint32_t))),
                             static_cast<uint32_t*>(calloc(mb.n, sizeof(uint32_t)))};
        }
    }
    BarrierClock* free_slot = nullptr;
    for (BarrierClock& b : mb.bars) {
        if (b.bar == bar) return b;
        if (!free_slot && (!b.bar || (b.arrived_at != interval() && b.completed_at != interval()))) free_slot = &b;
    }
    BarrierClock& b = free_slot ? *free_slot : mb.bars[0];   // past 64 live barriers: the first forgets
    b.bar = bar;
    b.arrived_at = b.completed_at = 0;
    return b;
}

void check_mbarrier_init(const void* bar) {
    BarrierClock& b = barrier_clock(bar);
    b.arrived_at = b.completed_at = 0;
}

void check_mbarrier_arrive(const void* bar) {
    global_sync(cur->linear);   // its global accesses so far, and what it acquired, go with it
    BarrierClock& b = barrier_clock(bar);
    uint32_t* c = current(b.arrived, b.arrived_at);
    join(c, row(cur->linear));
    if (c[cur->linear] < cur->seq) c[cur->linear] = cur->seq;
}

void check_mbarrier_complete(const void* bar) {
    BarrierClock& b = barrier_clock(bar);
    join(current(b.completed, b.completed_at), current(b.arrived, b.arrived_at));
    b.arrived_at = 0;
}

void check_mbarrier_acquire(const void* bar) {
    global_sync(cur->linear);   // its held global reads are checked under the clock they were made under
    BarrierClock& b = barrier_clock(bar);
    join(row(cur->linear), current(b.completed, b.completed_at));
}

// A __syncwarp() orders what each lane of its mask did before it with what each does after
// (the PTX ISA: bar.warp.sync orders memory among the threads taking part), so each lane's
// clock takes in the others' clocks and their accesses so far. An arrival by one lane then
// carries the whole warp's accesses: one arrival per warp may hand back a slot all its lanes read.
void check_mbarrier_warp_sync(unsigned w, unsigned mask) {
    if (!mb.n || mb.n != sched.nthreads) return;   // no mbarrier in this launch yet: nothing to carry
    static uint32_t joint[1024];
    for (unsigned l = 0, u = w * 32; l < 32 && u < mb.n; ++l, ++u)
        if ((mask >> l) & 1u) global_sync(u);
    memset(joint, 0, sizeof(uint32_t) * mb.n);
    for (unsigned l = 0, u = w * 32; l < 32 && u < mb.n; ++l, ++u)
        if ((mask >> l) & 1u) {
            join(joint, row(u));
            if (joint[u] < sched.threads[u].seq) joint[u] = sched.threads[u].seq;
        }
    for (unsigned l = 0, u = w * 32; l < 32 && u < mb.n; ++l, ++u)
        if ((mask >> l) & 1u) memcpy(row(u), joint, sizeof(uint32_t) * mb.n);
}

// Whether thread u's access at position seq of this interval is ordered before thread t's next
// one by the barriers' clocks (shared memory's race check, and the global one's:
// kc_check_global_races.cpp).
bool clock_orders(unsigned u, uint32_t seq, unsigned t) {
    return mb.n && mb.n == sched.nthreads && t < mb.n && u < mb.n && mb.row_at[t] == interval() &&
           seq < mb.known[size_t(t) * mb.n + u];
}

static bool barrier_ordered(const AccessRec& a, const Thread* t) { return clock_orders(a.tid, a.seq, t->linear); }

bool clock_copy(unsigned t, uint32_t* out) {
    if (!mb.n || mb.n != sched.nthreads || t >= mb.n || mb.row_at[t] != interval()) return false;
    const uint32_t* r = mb.known + size_t(t) * mb.n;
    bool others = false;
    for (unsigned u = 0; u < mb.n; ++u) {
        out[u] = r[u];
        if (u != t && r[u]) others = true;
    }
    return others;
}

// ---- what orders two accesses of one element ------------------------------------------------
// A wmma load or store is the whole warp's access: which lane touches which element is
// unspecified in CUDA, so it is ordered with another access of that warp (its own lane's
// included) only by a __syncwarp() or a barrier, except with the warp's other wmma accesses.
static bool ordered(const AccessRec& a, const Thread* t, bool atomic) {
    if (a.epoch != chk.epoch || (a.atomic && atomic)) return true;
    bool same_warp = a.tid / 32 == t->linear / 32;
    if (same_warp && a.wepoch != chk.warp_epoch[t->linear / 32]) return true;
    if (barrier_ordered(a, t)) return true;
    if (a.collective || chk.collective) return same_warp && a.collective && chk.collective;
    return a.tid == t->linear;
}

bool orders_before(const AccessRec& a, unsigned t) { return ordered(a, &sched.threads[t], false); }

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

// ---- stores of one value ------------------------------------------------------------------------
// Two plain stores to one shared element that nothing orders race in CUDA's memory model even
// when they store the same bytes, but then every outcome is those bytes (`__shared__ bool done;
// done = true;` by many threads): a SameValueWriteWarning, as on global memory
// (kc_check_global_races.cpp), not a race. The hook runs before the store, so a store that meets
// only an unordered store (no unordered read: a read in the race stays one) is held, with the
// bytes it is about to overwrite, until its thread's next shared access or its next switch
// (check_thread_yield), and not before its own access is done (a 4-byte store to a byte array
// meets the check once per byte, all before it stores); memory then shows what it stored: the
// same bytes make it the warning (the worker's first, in its note), other bytes the write-write
// race it is. A thread holds up to HELD granules at once (a vector store); past that, the race
// is reported as one.
constexpr unsigned HELD = 4;
struct HeldStore { const Region* r; uint64_t elem; uint32_t pc; uint32_t seq; AccessRec other; uint8_t old[16]; };
static HeldStore held[1024][HELD];
static uint8_t nheld[1024];

static const uint8_t* granule_bytes(const Region* r, uint64_t elem, unsigned& n) {
    n = r->granule ? r->granule : r->elem_size;
    return reinterpret_cast<const uint8_t*>(r->base) + elem * n;
}

// Whether the granule's bytes equal `old` (to = true: copies them into `old` instead).
static bool same_granule(const Region* r, uint64_t elem, uint8_t* old, bool to = false) {
    unsigned n;
    const uint8_t* p = granule_bytes(r, elem, n);
    return same_bytes(old, reinterpret_cast<uintptr_t>(p), n, to);
}

static void note_same_value(const HeldStore& h) {
    if (my_status->note[0]) return;
    char ix[128], dims[64];
    index_json(ix, sizeof ix, h.r, element_of(h.r, h.elem));
    dims_json(dims, sizeof dims, h.r);
    finding(my_status->note, sizeof my_status->note, Finding::same_value,
            "\"array\":\"%s\",\"space\":\"shared\",\"index\":%s,\"dims\":%s,\"block\":%u,\"thread\":%u,"
            "\"pc\":%u,\"other_block\":%u,\"other_thread\":%u,\"other_pc\":%u}",
            h.r->name, ix, dims, my_status->block, cur->linear, h.pc, my_status->block, unsigned(h.other.tid),
            h.other.pc);
}

// The running thread's held stores, now made (`all`: at a switch; else but those of its access
// in progress, cur->seq): the same bytes as before each, or a race.
static void resolve_held(bool all) {
    unsigned t = cur->linear, kept = 0;
    for (unsigned i = 0; i < nheld[t]; ++i) {
        HeldStore& h = held[t][i];
        if (!all && h.seq == cur->seq) held[t][kept++] = h;
        else if (same_granule(h.r, h.elem, h.old)) note_same_value(h);
        else race(h.r, h.elem, "WAW", h.other, "write", "write", h.pc);
    }
    nheld[t] = uint8_t(kept);
}

void check_thread_yield() {
    if (cur && cur->linear < 1024 && nheld[cur->linear]) resolve_held(true);
}

void check_held_block_start() { memset(nheld, 0, sizeof nheld); }

// Whether plain store `me` of element elem, which meets the unordered plain store w, is held to
// see what it stores: not where a read races with it too (that race is reported, naming the read).
static bool hold_store(const Region* r, uint64_t elem, uint32_t pc, const AccessRec& w, const AccessRec& me,
                       const Shadow& s) {
    unsigned t = me.tid, n;
    granule_bytes(r, elem, n);
    if (w.atomic || w.collective || w.async_proxy || me.atomic || me.collective || me.async_proxy ||
        t >= 1024 || nheld[t] == HELD || n > sizeof(HeldStore::old))
        return false;
    for (const AccessRec* rd : {&s.r1, &s.r2})
        if (rd->epoch && !ordered(*rd, cur, false)) {
            race(r, elem, rd->seq < me.seq ? "WAR" : "RAW", *rd, rd->atomic ? "atomic" : "read", "write", pc);
            return false;
        }
    HeldStore& h = held[t][nheld[t]++];
    h = HeldStore{r, elem, pc, me.seq, w, {}};
    same_granule(r, elem, h.old, true);
    return true;
}

// probe: check the access against the element's history without recording it (an
// asynchronous copy as it is issued: it writes later, at its wait).
void shared_element(const Region* r, uint64_t elem, uint32_t pc, Op op, bool atomic, bool atomic_reads,
                    bool probe) {
    Shadow& s = r->shadow[elem];
    Thread* t = cur;
    if (t->linear < 1024 && nheld[t->linear]) resolve_held(false);
    if (s.pend.set) async_race(r, elem, s, pc, probe ? "copy" : op == READ ? "read" : "write");
    AccessRec me{chk.epoch, uint16_t(t->linear), chk.warp_epoch[t->linear / 32], pc, t->seq, atomic, chk.collective,
                 chk.async_write};
    if (op == READ || atomic_reads) {
        if (s.w.epoch && !ordered(s.w, t, atomic))
            race(r, elem, s.w.seq < me.seq ? "RAW" : "WAR", s.w, s.w.atomic ? "atomic" : "write",
                 atomic ? "atomic" : "read", pc);
        if (!s.w.epoch && !probe) hold_uninit(r, elem, uint16_t(t->linear), pc);   // kc_check_init.cpp
    }
    if (op == READ) {
        // Keep up to two readers of this interval; a slot is reused when it is from an
        // older interval or the same thread.
        if (!s.r1.epoch || s.r1.epoch != chk.epoch || s.r1.tid == me.tid) s.r1 = me;
        else if (!s.r2.epoch || s.r2.epoch != chk.epoch || s.r2.tid == me.tid) s.r2 = me;
        return;
    }
    if (s.w.epoch && !ordered(s.w, t, atomic) && (probe || !hold_store(r, elem, pc, s.w, me, s)))
        race(r, elem, "WAW", s.w, s.w.atomic ? "atomic" : "write", atomic ? "atomic" : "write", pc);
    for (const AccessRec* rd : {&s.r1, &s.r2})
        if (rd->epoch && !ordered(*rd, t, atomic))
            race(r, elem, rd->seq < me.seq ? "WAR" : "RAW", *rd, rd->atomic ? "atomic" : "read",
                 atomic ? "atomic" : "write", pc);
    if (probe) return;
    s.w = me;
    if (!me.async_proxy) r->generic_written = true;
}

// ---- asynchronous copies (kc_memory.cpp: async_copy) -----------------------------------------

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

}  // namespace kc
