// Checked mode's race check on global memory (kc_check.h), between any two threads of a
// launch. (compute-sanitizer's racecheck checks shared memory only.)
//
// The shadow. Every global memory (an array argument's slot, a whole program's allocation,
// a __device__ variable) has a shadow entry per granule (the element's size, at most 4
// bytes, so threads writing neighbouring chars or the fields of a struct do not race):
// the last write and up to two reads, each with its block, thread, barrier interval, warp
// __syncwarp count, line and the thread's position in its interval (Thread::seq, as shared
// memory's accesses have it). The shadow lives in one MAP_SHARED mapping made before the
// workers are forked, so blocks on different workers see each other's accesses; each entry
// is updated under one of a set of striped spin locks.
//
// The rules (CUDA's memory model, as compute-sanitizer's racecheck applies it to shared
// memory, here for global memory). Two accesses conflict when they touch a common granule,
// at least one writes, and not both are strong (atomic, or volatile: the PTX memory model's
// "morally strong" relaxed accesses never race with each other). A plain read that only
// seeds its own thread's next atomicCAS of the same bytes (the Programming Guide's
// compare-and-swap loops: `int old = *address; do { assumed = old; old = atomicCAS(...); }`)
// counts as strong: whatever it reads, the CAS checks. Two conflicting accesses
// are ordered, and no race, when
//   - they are of one thread, or of one block in different barrier intervals, or of one
//     warp with a __syncwarp() between them (as for shared memory, kc_check_races.cpp);
//   - or a grid.sync() of a cooperative launch lies between them (check_grid_released);
//   - or they are of one block and a named barrier (bar.sync id, count), an mbarrier or a
//     __syncwarp() orders them: the clocks of kc_check_races.cpp ("mbarriers"), which order
//     each thread's accesses up to a position in its interval. A named barrier orders its
//     threads' global accesses as __syncthreads() orders the block's (PTX ISA, bar: "prior
//     memory accesses requested by this thread are performed relative to all threads
//     participating in the barrier"; memory model: a bar.sync synchronizes with the bar.sync
//     of the others on the same barrier). A thread arriving on a barrier is first moved past
//     its global accesses (global_sync), which do not count in seq themselves;
//   - or a release/acquire chain orders them: the first thread's __threadfence() followed by
//     a strong write (an atomic, a volatile store) to some location L releases what its
//     block did before the fence's barrier interval, what the thread itself did in it, and
//     what the clocks ordered before the fence of the block's other threads in it (a
//     warpgroup's writes, a named barrier, then one thread's fence: PTX's base causality
//     order is transitive, the "cumulativity" of its synchronizing operations); a strong read
//     of L (an atomic, a volatile load) by another block acquires that, for the reading
//     thread at once, for the threads of its block that the clocks order after the read, and
//     for its whole block after its next __syncthreads().
//     This covers flag publication, the samples' last-block-done reduction (the fence and
//     atomicInc in thread 0, __syncthreads(), then every thread reads), the same with a
//     named barrier of a warpgroup for the __syncthreads() (a stream-K fixup), and spin locks
//     built of atomicCAS, __threadfence() and atomicExch. A strong write without a fence
//     before it releases nothing: without the fence a GPU may make the data visible after
//     the flag.
// Scopes (the memory model's: an operation orders only the threads its scope covers). An atomic
// or fence of block scope (atomicAdd_block, atomicCAS_block, __threadfence_block()) covers only
// its own block's threads; device and system scope cover every thread of a launch. So two
// atomics of different blocks are strong against each other only if neither has block scope
// (atomicAdd_block on one counter from two blocks races); a release is of block scope when its
// fence or its strong write is, and then only threads of its own block acquire it; an acquire
// by a block-scoped atomic acquires only its own block's releases (a lock taken with
// atomicCAS_block by threads of different blocks orders nothing between them). A race found
// where a block-scoped release was skipped says so ("scope":"block"), naming the scope.
// Separate launches are ordered: each launch has a fresh shadow.
//
// Release and acquire are tracked per location (SyncObj): for each block that released
// there, the latest point released, `point(epoch, ref)`: everything of the block in
// earlier intervals, and in the interval itself the releasing thread's accesses (ref: the
// thread) or, where the clocks ordered other threads' accesses before its fence, theirs up
// to the positions the fence found (ref: a clock of the launch's pool, kept in the shared
// mapping; the releasing thread's own entry covers its whole interval). Two releases of one
// block in one interval join (a new clock; with the pool full the later replaces the
// earlier: stricter, never a missed race). A block keeps what it has acquired (Know, per
// worker: up to KNOW points of each block, each with the thread that acquired it and its
// position) and passes on, when it releases in turn, what the releasing thread has
// acquired, so chains (a lock handed from block to block) order what they should.
//
// Because the shadow keeps what happened, not when, the verdict does not depend on the
// schedule: two blocks that race are found whether they ran at once on two workers or one
// after the other on one. Readers are kept so that two of different blocks survive, so a
// later writer in any block conflicts with at least one of them.
#include <errno.h>
#include <sys/mman.h>

#include "kc_check.h"

namespace kc {

constexpr uint32_t MAX_GMEM = MAX_SLOTS + 256;   // allocations or argument slots, then __device__ variables
constexpr uint32_t MAX_SYNC = 64;                // locations released through (more share the last one)
constexpr uint32_t NLOCKS = 4096;
constexpr uint32_t MAX_SYNC_BLOCKS = 1u << 20;   // blocks whose releases are tracked (beyond: stricter)
constexpr uint32_t KNOW = 4;                     // points kept of each block acquired from (beyond: stricter)
constexpr uint32_t CLOCK_BIT = 0x80000000u;      // a point's ref: a clock of the pool, not a thread
constexpr uint64_t CLOCK_POOL_BYTES = 32ull << 20;   // the pool of released clocks (beyond: stricter)

// One access. tid's low 11 bits are the thread; the flags above them say what kind.
struct GAcc {
    uint32_t block;     // linear block id + 1; 0: no access
    uint32_t epoch;     // the block's barrier interval
    uint32_t pc;
    uint16_t tid;
    uint16_t wepoch;    // the warp's __syncwarp count
    uint32_t seq;       // the thread's position in its interval (Thread::seq)
};
constexpr uint16_t TID_MASK = 0x07ff, COLLECTIVE_BIT = 0x0800, STRONG_BIT = 0x1000, ATOMIC_BIT = 0x2000,
                   BLOCK_SCOPE_BIT = 0x4000;   // an atomic of block scope
struct GShadow { GAcc w, r1, r2; };

struct GMem {
    uint64_t lo, hi;       // the bytes it shadows
    uint64_t shadow;       // offset of its GShadow entries in the mapping
    uint32_t granule;
    uint32_t pad;
};

struct SyncObj {
    uint64_t addr;         // 0: free
    uint32_t version;      // advanced at every release
    uint32_t count;        // blocks in `list`
    uint32_t lock;
    uint32_t pad;
};

struct GHeader {
    uint64_t bytes;
    uint32_t nmem, nblocks, sync_blocks, pad;
    uint64_t marks, lists;     // offsets: MAX_SYNC arrays of sync_blocks points, then of block ids
    uint64_t scopes;           // offset: MAX_SYNC arrays of sync_blocks bytes: 1 where a mark is of block scope
    uint64_t clocks;           // offset: the pool of nclocks clocks of clock_len (a block's threads) entries
    uint32_t clock_len, nclocks;
    uint32_t clock_next, pad2; // the pool's next free clock
    GMem mem[MAX_GMEM];
    SyncObj sync[MAX_SYNC];
    uint32_t sync_insert;      // the lock taken to claim a SyncObj
    uint32_t locks[NLOCKS];
};

// What this worker's current block has acquired from each block: points, each with the
// thread that acquired it, in which interval and at which position (the others of the block
// see it once the clocks order that position before them, or after the next __syncthreads()).
struct KnowPoint { uint64_t point; uint32_t acq_epoch, acq_tid, acq_seq, pad; };
struct Know { KnowPoint p[KNOW]; uint32_t n; };

struct GlobalState {
    GHeader* h = nullptr;
    char* base = nullptr;
    Know* know = nullptr;          // sync_blocks entries
    uint32_t* known = nullptr;     // the blocks with an entry in `know`, to clear at the next block
    uint32_t nknown = 0;
    uint32_t seen[MAX_SYNC] = {};  // the version of each SyncObj last acquired
    uint32_t seen_epoch[MAX_SYNC] = {}, seen_tid[MAX_SYNC] = {};   // ... by which thread, when
    uint32_t fence_epoch[1024] = {};   // each thread's last __threadfence(): its interval + 1
    uint8_t fence_block[1024] = {};    // ... of block scope (__threadfence_block())
    uint8_t fence_clock[1024] = {};    // ... found its clock ordering other threads' accesses:
    uint32_t* fence_rows = nullptr;    //     that clock (a row of nthreads entries per thread)
    unsigned fence_rows_n = 0;
    uint32_t fence_ref[1024] = {};     //     and the pool's copy of it, once released (0: none yet)
    uintptr_t acquiring[1024] = {};    // each thread's strong read not yet acquired (see acquire)
    uint32_t acquiring_seq[1024] = {}; // ... and its position
    uint8_t acquiring_block[1024] = {};// ... made by an atomic of block scope
    uint32_t scoped_from[8] = {};      // blocks whose releases of block scope this block skipped
    uint32_t nscoped = 0;
    uint32_t after[1024] = {};         // each thread's last global access: its position + 1,
    uint32_t after_epoch[1024] = {};   // ... and its interval
    uint32_t block = 0;            // linear id of the block running
    uint32_t grid_interval = 0;    // a cooperative launch: the interval its latest grid.sync() opened
};
static GlobalState gs;

inline uint64_t point(uint32_t epoch, uint32_t tid) { return (uint64_t(epoch) << 32) | (tid + 1); }
inline uint64_t clock_point(uint32_t epoch, uint32_t ref) { return (uint64_t(epoch) << 32) | ref; }
inline uint32_t point_epoch(uint64_t p) { return uint32_t(p >> 32); }
inline uint32_t point_ref(uint64_t p) { return uint32_t(p); }

inline void spin_lock(uint32_t* l) {
    while (__atomic_exchange_n(l, 1u, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
}
inline void spin_unlock(uint32_t* l) { __atomic_store_n(l, 0u, __ATOMIC_RELEASE); }

// ---- the launch: in the caller's process, before the workers are forked ----------------

static uint32_t granule_for(uint64_t elem_size) {
    uint64_t low = elem_size ? (elem_size & (~elem_size + 1)) : 1;
    return uint32_t(low < 4 ? low : 4);
}

// Lays out the shadow of every global memory of the launch and maps it, shared and zeroed
// (the pages a launch never touches cost nothing). Returns 0 or -errno.
int global_launch_start(const LaunchDesc* d) {
    CheckDesc* c = d->check;
    c->gshadow = c->gshadow_bytes = 0;
    if (!c->global_races) return 0;
    GMem mem[MAX_GMEM];
    uint32_t n = 0;
    auto add = [&](uint64_t lo, uint64_t hi, uint32_t granule) {
        for (uint32_t i = 0; i < n; ++i)   // views of one array share a slot and its shadow
            if (lo < mem[i].hi && mem[i].lo < hi) {
                if (lo < mem[i].lo) mem[i].lo = lo;
                if (hi > mem[i].hi) mem[i].hi = hi;
                if (granule < mem[i].granule) mem[i].granule = granule;
                return;
            }
        if (n < MAX_GMEM && hi > lo) mem[n++] = GMem{lo, hi, 0, granule, 0};
    };
    if (c->nallocs)
        for (uint32_t i = 0; i < c->nallocs; ++i) add(c->allocs[i].base, c->allocs[i].base + c->allocs[i].bytes,
                                                      granule_for(c->allocs[i].elem_size));
    else
        for (uint32_t i = 0; i < c->nparams; ++i)
            if (c->extents[i]) {   // a view: its whole allocation
                uint64_t lo = reinterpret_cast<uint64_t>(*static_cast<char**>(d->args[i]));
                add(lo - c->leads[i], lo + (c->spans[i] ? c->spans[i] : c->extents[i]), granule_for(c->elem_sizes[i]));
            }
    for (uint32_t i = 0; i < c->ndevice; ++i)
        add(c->device_vars[2 * i], c->device_vars[2 * i] + c->device_vars[2 * i + 1],
            granule_for(c->device_elem_sizes[i]));
    uint64_t nblocks = uint64_t(d->grid[0]) * d->grid[1] * d->grid[2];
    uint32_t sync_blocks = uint32_t(nblocks < MAX_SYNC_BLOCKS ? nblocks : MAX_SYNC_BLOCKS);
    auto round = [](uint64_t x) { return (x + 63) & ~uint64_t(63); };
    uint64_t at = round(sizeof(GHeader));
    for (uint32_t i = 0; i < n; ++i) {
        mem[i].shadow = at;
        at = round(at + (mem[i].hi - mem[i].lo + mem[i].granule - 1) / mem[i].granule * sizeof(GShadow));
    }
    uint64_t marks = at, lists = round(marks + uint64_t(MAX_SYNC) * sync_blocks * sizeof(uint64_t));
    uint64_t scopes = round(lists + uint64_t(MAX_SYNC) * sync_blocks * sizeof(uint32_t));
    uint64_t clocks = round(scopes + uint64_t(MAX_SYNC) * sync_blocks);
    uint32_t clock_len = d->block[0] * d->block[1] * d->block[2];
    uint32_t nclocks = uint32_t(CLOCK_POOL_BYTES / (sizeof(uint32_t) * (clock_len ? clock_len : 1)));
    uint64_t bytes = round(clocks + uint64_t(nclocks) * clock_len * sizeof(uint32_t));
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return -errno;
    GHeader* h = static_cast<GHeader*>(m);
    h->bytes = bytes;
    h->nmem = n;
    h->nblocks = uint32_t(nblocks);
    h->sync_blocks = sync_blocks;
    h->marks = marks;
    h->lists = lists;
    h->scopes = scopes;
    h->clocks = clocks;
    h->clock_len = clock_len;
    h->nclocks = nclocks;
    memcpy(h->mem, mem, sizeof(GMem) * n);
    c->gshadow = reinterpret_cast<uint64_t>(m);
    c->gshadow_bytes = bytes;
    return 0;
}

// ---- in each worker ----------------------------------------------------------------------

static GMem* gmem_at(uintptr_t a) {
    for (uint32_t i = 0; i < gs.h->nmem; ++i)
        if (a >= gs.h->mem[i].lo && a < gs.h->mem[i].hi) return &gs.h->mem[i];
    return nullptr;
}

void global_worker_start(const CheckDesc* c, Region* const* regions, int nregions) {
    if (!c->gshadow) return;
    gs.h = reinterpret_cast<GHeader*>(c->gshadow);
    gs.base = reinterpret_cast<char*>(c->gshadow);
    gs.know = static_cast<Know*>(calloc(gs.h->sync_blocks ? gs.h->sync_blocks : 1, sizeof(Know)));
    gs.known = static_cast<uint32_t*>(calloc(gs.h->sync_blocks ? gs.h->sync_blocks : 1, sizeof(uint32_t)));
    for (int i = 0; i < nregions; ++i)
        if (regions[i]) regions[i]->gm = gmem_at(reinterpret_cast<uintptr_t>(regions[i]->base));
}

void global_block_start(uint32_t block) {
    gs.block = block;
    if (!gs.h) return;
    for (uint32_t i = 0; i < gs.nknown; ++i) gs.know[gs.known[i]] = Know{};
    gs.nknown = 0;
    memset(gs.seen, 0, sizeof gs.seen);
    memset(gs.seen_epoch, 0, sizeof gs.seen_epoch);
    unsigned n = sched.nthreads < 1024 ? sched.nthreads : 1024;
    memset(gs.fence_epoch, 0, sizeof(uint32_t) * n);
    memset(gs.fence_clock, 0, n);
    memset(gs.fence_block, 0, n);
    gs.nscoped = 0;
    memset(gs.acquiring, 0, sizeof(uintptr_t) * n);
    memset(gs.after_epoch, 0, sizeof(uint32_t) * n);
}

// grid.sync() (kc_grid.cpp). Every block opens its next interval at the barrier (check_barrier);
// once all have arrived, each takes the largest of those intervals as its own, so every access made
// before the barrier, by any block, is of an earlier interval than any made after it. (No block can
// be past the barrier while another is before it, so an access of an earlier interval found in the
// shadow is one made before it.)
uint32_t check_grid_interval() { return chk.epoch; }

void check_grid_released(uint32_t interval) {
    chk.epoch = interval;
    gs.grid_interval = interval;
}

// A fence by the running thread: what it releases at its next strong write is fixed here, its
// clock included (what of the others' accesses barriers ordered before the fence), and its scope.
// A block-scoped fence after a device-scoped one in the same interval leaves that one standing
// (more permissive: never a false report).
void global_fence(int scope) {
    if (!cur || cur->linear >= 1024) return;
    unsigned t = cur->linear, n = sched.nthreads;
    bool block = scope == SCOPE_BLOCK;
    if (block && gs.fence_epoch[t] == chk.epoch + 1 && !gs.fence_block[t]) return;
    gs.fence_block[t] = block;
    gs.fence_epoch[t] = chk.epoch + 1;
    gs.fence_clock[t] = 0;
    gs.fence_ref[t] = 0;
    if (!gs.h || n > 1024) return;
    if (gs.fence_rows_n != n) {
        free(gs.fence_rows);
        gs.fence_rows = static_cast<uint32_t*>(calloc(size_t(n) * n, sizeof(uint32_t)));
        gs.fence_rows_n = n;
    }
    uint32_t* row = gs.fence_rows + size_t(t) * n;
    if (!clock_copy(t, row)) return;
    row[t] = ~0u;   // the thread's own accesses of the interval: all of them, as without a clock
    gs.fence_clock[t] = 1;
}

// ---- points: what a release covers ---------------------------------------------------------

static uint32_t* clock_at(uint32_t ref) {
    return reinterpret_cast<uint32_t*>(gs.base + gs.h->clocks) + uint64_t(ref & ~CLOCK_BIT) * gs.h->clock_len;
}

// A clock of the pool holding `row` (clock_len entries): its ref, or 0 when the pool is full.
static uint32_t new_clock(const uint32_t* row) {
    uint32_t i = __atomic_fetch_add(&gs.h->clock_next, 1u, __ATOMIC_RELAXED);
    if (i >= gs.h->nclocks) return 0;
    memcpy(clock_at(CLOCK_BIT | i), row, sizeof(uint32_t) * gs.h->clock_len);
    return CLOCK_BIT | i;
}

// Point p's interval, as a clock: for each thread, the position below which it is released.
static void row_of(uint64_t p, uint32_t* row) {
    uint32_t ref = point_ref(p), n = gs.h->clock_len;
    if (ref & CLOCK_BIT) {
        memcpy(row, clock_at(ref), sizeof(uint32_t) * n);
        return;
    }
    memset(row, 0, sizeof(uint32_t) * n);
    if (ref - 1 < n) row[ref - 1] = ~0u;
}

// Two points of one block and interval joined: the one that covers the other, or a new clock
// covering both (p, the later, where the pool is full: stricter, never a missed race).
static uint64_t join_points(uint64_t m, uint64_t p) {
    if (m == p || gs.h->clock_len > 1024) return p;
    static uint32_t a[1024], b[1024];
    row_of(m, a);
    row_of(p, b);
    bool a_covers = true, b_covers = true;
    for (uint32_t u = 0; u < gs.h->clock_len; ++u) {
        if (a[u] < b[u]) a_covers = false;
        if (b[u] < a[u]) b_covers = false;
        if (b[u] > a[u]) a[u] = b[u];
    }
    if (a_covers) return m;
    if (b_covers) return p;
    uint32_t ref = new_clock(a);
    return ref ? clock_point(point_epoch(p), ref) : p;
}

// Does point p release its block's access in interval ex, of thread tx at position sx?
static bool covers(uint64_t p, uint32_t ex, uint32_t tx, uint32_t sx) {
    uint32_t e = point_epoch(p), ref = point_ref(p);
    if (ex != e) return ex < e;
    if (!(ref & CLOCK_BIT)) return tx == ref - 1;
    return tx < gs.h->clock_len && sx < clock_at(ref)[tx];
}

// Does thread t of this block see what this block acquired in x: the thread that acquired it,
// its other threads after a __syncthreads(), or once the clocks order the acquiring read
// before them?
static bool sees(const KnowPoint& x, uint32_t epoch, unsigned t) {
    return x.acq_epoch < epoch || x.acq_tid == t || clock_orders(x.acq_tid, x.acq_seq, t);
}

// Does what this block has acquired order block bx's access `a` before `me`?
static bool acquired(uint32_t bx, const GAcc& a, const GAcc& me) {
    if (bx >= gs.h->sync_blocks) return false;
    const Know& k = gs.know[bx];
    for (uint32_t j = 0; j < k.n; ++j)
        if (sees(k.p[j], me.epoch, me.tid & TID_MASK) && covers(k.p[j].point, a.epoch, a.tid & TID_MASK, a.seq))
            return true;
    return false;
}

// Is access a ordered before `me`, an access of the running block?
static bool g_ordered(const GAcc& a, const GAcc& me) {
    if (!a.block) return true;
    // two strong accesses: morally strong unless one is an atomic of block scope and the other of another block
    if ((a.tid & STRONG_BIT) && (me.tid & STRONG_BIT) && (a.block == me.block || !((a.tid | me.tid) & BLOCK_SCOPE_BIT)))
        return true;
    uint32_t ab = a.block - 1, at = a.tid & TID_MASK, mt = me.tid & TID_MASK;
    if (a.epoch < gs.grid_interval) return true;   // before the latest grid.sync(), whichever block
    if (a.block == me.block) {
        if (a.epoch != me.epoch) return true;
        bool same_warp = at / 32 == mt / 32;
        if (same_warp && a.wepoch != me.wepoch) return true;
        if (clock_orders(at, a.seq, mt)) return true;   // a named barrier, an mbarrier between them
        bool a_coll = a.tid & COLLECTIVE_BIT, m_coll = me.tid & COLLECTIVE_BIT;
        if (a_coll || m_coll) {
            if (same_warp && a_coll && m_coll) return true;
        } else if (at == mt) {
            return true;
        }
    }
    return acquired(ab, a, me);
}

// Whether this block skipped a release of block scope by block b (then a race with b says so).
static bool skipped_scope(uint32_t b) {
    for (uint32_t i = 0; i < gs.nscoped; ++i)
        if (gs.scoped_from[i] == b) return true;
    return false;
}

static const char* g_op(const GAcc& a, bool write) {
    if (a.tid & ATOMIC_BIT) return a.tid & BLOCK_SCOPE_BIT ? "block-scoped atomic" : "atomic";
    if (a.tid & STRONG_BIT) return write ? "volatile write" : "volatile read";
    return write ? "write" : "read";
}

// The race of `me` with `other` as a finding, into `into` unless it holds one already: checked
// mode's pending race, or (note_repeat) the worker's repeated-block candidate.
static void race_finding(char* into, size_t size, const Region* r, int64_t elem, const GAcc& other, bool other_write,
                         const GAcc& me, bool me_write) {
    if (into[0]) return;
    uint64_t esize = r->elem_size ? r->elem_size : 1;
    finding(into, size, Finding::global_race,
             "\"array\":\"%s\",\"space\":\"%s\",\"index\":[%lld],\"dims\":[%llu],"
             "\"hazard\":\"%s\",\"block\":%u,\"thread\":%u,\"pc\":%u,\"op\":\"%s\",\"other_block\":%u,"
             "\"other_thread\":%u,\"other_pc\":%u,\"other_op\":\"%s\",\"interval_line\":%d,\"scope\":\"%s\"}",
             r->name, r->kind == DEVICE ? "device" : "global", (long long)elem,
             (unsigned long long)(r->bytes / esize), other_write && me_write ? "WW" : "RW", me.block - 1,
             me.tid & TID_MASK, me.pc, g_op(me, me_write), other.block - 1, other.tid & TID_MASK, other.pc,
             g_op(other, other_write), chk.interval_line, skipped_scope(other.block - 1) ? "block" : "");
}

static void global_race(const Region* r, int64_t elem, const GAcc& other, bool other_write, const GAcc& me,
                        bool me_write) {
    race_finding(chk.pending_race, sizeof chk.pending_race, r, elem, other, other_write, me, me_write);
}

// Keep the new reader; of the readers kept, two of different blocks survive where there
// were two (any later writer conflicts with one of them), and a block's newest read
// replaces its older ones.
static void keep_reader(GShadow& s, const GAcc& me) {
    GAcc* slots[2] = {&s.r1, &s.r2};
    for (GAcc* r : slots)
        if (r->block == me.block && (r->tid & TID_MASK) == (me.tid & TID_MASK)) { *r = me; return; }
    for (GAcc* r : slots)
        if (!r->block) { *r = me; return; }
    for (GAcc* r : slots)
        if (r->block == me.block && r->epoch != me.epoch) { *r = me; return; }
    if (s.r1.block == s.r2.block) s.r2 = me;
    else if (s.r1.block == me.block) s.r1 = me;
    else if (s.r2.block == me.block) s.r2 = me;
}

// Writes of one value. Two plain writes that nothing orders race in CUDA's memory model even
// when they store the same value, but then every outcome is that value (many threads setting a
// flag, `*over = true`, as Rodinia's bfs does): reported as a warning, not an error. The hooks
// run before the store, so a write that meets an unordered write is held, with the bytes it
// is about to overwrite, until its thread's next global access, barrier or interval end; then
// memory shows what it stored: the same bytes make it a warning (the run's first, in the
// worker's note), other bytes the race it is. One pattern is judged at the launch's end: the
// same thread of two blocks storing the same value, at one instruction, into one element of an
// array of several. That is the grid repeating one block's work (a matmul whose index forgets
// blockIdx, chapter 1's demo, which leaves the rest of the array unwritten), an error, unless
// threads of other indices also stored one value into one element at that instruction in the
// launch (bfs's `g_cost[id] = g_cost[tid] + 1` from two nodes of one frontier, which meet by
// the graph, not by the thread's index). The worker keeps its first such write as a finding
// (WorkerStatus.repeat) and lists the instructions of the others (same_value_pcs); Python
// decides over every worker (forked_launch.py). A flag of one element is always the warning.
struct SameValue { const Region* r; uintptr_t a; unsigned size; int64_t elem; GAcc other, me; bool repeat; uint8_t old[16]; };
static SameValue same_value[1024];   // per thread; size 0: none held

// Whether the `size` bytes at a equal `old` (to = true: copies them into `old` instead). Byte by
// byte, never through memcpy or memcmp: the kernel's library defines its own, which check and
// record every access they make as the kernel's (kc_check_access.cpp).
__attribute__((optimize("no-tree-loop-distribute-patterns")))
bool same_bytes(uint8_t* old, uintptr_t a, unsigned size, bool to) {
    const volatile uint8_t* p = reinterpret_cast<const volatile uint8_t*>(a);
    bool same = true;
    for (unsigned i = 0; i < size; ++i) {
        if (to) old[i] = p[i];
        same = same && old[i] == p[i];
    }
    return same;
}

static void note_same_value(const SameValue& v) {
    if (my_status->note[0]) return;
    uint64_t esize = v.r->elem_size ? v.r->elem_size : 1;
    finding(my_status->note, sizeof my_status->note, Finding::same_value,
            "\"array\":\"%s\",\"space\":\"%s\",\"index\":[%lld],\"dims\":[%llu],\"block\":%u,\"thread\":%u,"
            "\"pc\":%u,\"other_block\":%u,\"other_thread\":%u,\"other_pc\":%u}",
            v.r->name, v.r->kind == DEVICE ? "device" : "global", (long long)v.elem,
            (unsigned long long)(v.r->bytes / esize), v.me.block - 1, v.me.tid & TID_MASK, v.me.pc, v.other.block - 1,
            v.other.tid & TID_MASK, v.other.pc);
}

// A same-value write of the same thread of two blocks at one instruction: the worker's first.
static void note_repeat(const SameValue& v) {
    race_finding(my_status->repeat, sizeof my_status->repeat, v.r, v.elem, v.other, true, v.me, true);
}

// An instruction at which threads of different indices stored one value into one element.
static void note_same_value_pc(uint32_t pc) {
    uint32_t n = my_status->n_same_value_pcs, cap = sizeof my_status->same_value_pcs / sizeof(uint32_t);
    for (uint32_t i = 0; i < n; ++i)
        if (my_status->same_value_pcs[i] == pc) return;
    if (n < cap) my_status->same_value_pcs[my_status->n_same_value_pcs++] = pc;
}

// Thread t's held write, now made: the same bytes as before it, or a race.
static void resolve_same_value(unsigned t) {
    SameValue& v = same_value[t];
    if (!v.size) return;
    if (!same_bytes(v.old, v.a, v.size)) global_race(v.r, v.elem, v.other, true, v.me, true);
    else if (v.repeat) note_repeat(v);
    else {
        note_same_value_pc(v.me.pc);
        note_same_value(v);
    }
    v.size = 0;
}

// Whether a plain write `me` that nothing orders after the plain write `w` is held to see what
// it stores (one access a thread: another is reported at once).
static bool hold_same_value(const Region* r, uintptr_t a, unsigned size, int64_t elem, const GAcc& w, const GAcc& me) {
    unsigned t = me.tid & TID_MASK;
    if ((w.tid | me.tid) & (STRONG_BIT | ATOMIC_BIT) || size > sizeof(SameValue::old)) return false;
    uint64_t esize = r->elem_size ? r->elem_size : 1;
    bool repeat = w.block != me.block && (w.tid & TID_MASK) == t && w.pc == me.pc && r->bytes / esize > 1;
    if (same_value[t].size) return same_value[t].a == a && same_value[t].size == size;   // its next granule
    SameValue& v = same_value[t];
    v = SameValue{r, a, size, elem, w, me, repeat, {}};
    same_bytes(v.old, a, size, true);
    return true;
}

// Checks access `me` of `size` bytes at address a of global region r against the shadow, and
// records it.
static void global_check(const Region* r, uintptr_t a, unsigned size, const GAcc& me, bool reads, bool writes) {
    GMem* m = r->gm;
    GShadow* shadow = reinterpret_cast<GShadow*>(gs.base + m->shadow);
    uint64_t g = m->granule, esize = r->elem_size ? r->elem_size : 1;
    uint64_t first = (a - m->lo) / g, last = (a + size - 1 - m->lo) / g;
    uint32_t salt = uint32_t(m - gs.h->mem) * 2654435761u;
    bool atomic = me.tid & ATOMIC_BIT;
    for (uint64_t e = first; e <= last; ++e) {
        uint32_t* lock = &gs.h->locks[(uint32_t(e) ^ salt) % NLOCKS];
        GShadow& s = shadow[e];
        int64_t elem = (int64_t(m->lo + e * g) - int64_t(uintptr_t(r->base))) / int64_t(esize);   // < 0: before a view
        spin_lock(lock);
        if (!g_ordered(s.w, me) && !(writes && hold_same_value(r, a, size, elem, s.w, me)))
            global_race(r, elem, s.w, true, me, writes);
        if (writes && atomic) {
            s.w = me;   // the readers stay: a plain write later must still meet them
        } else if (writes) {
            if (!g_ordered(s.r1, me)) global_race(r, elem, s.r1, false, me, true);
            if (!g_ordered(s.r2, me)) global_race(r, elem, s.r2, false, me, true);
            s.w = me;
            s.r1 = s.r2 = GAcc{};   // ordered before this write, or reported
        } else if (reads) {
            keep_reader(s, me);
        }
        spin_unlock(lock);
    }
}

// A thread's plain reads of global memory are held (the last HELD of them) until the thread's
// next write or atomic, or the end of the interval: one that an atomicCAS of the same bytes
// follows only seeded it, and counts as strong.
constexpr unsigned HELD = 4;
struct HeldRead { const Region* r; uintptr_t a; unsigned size; GAcc me; };
struct Held { HeldRead reads[HELD]; unsigned n; };
static Held held[1024];

static void check_read(HeldRead& h, bool seeds_cas) {
    if (seeds_cas) h.me.tid |= STRONG_BIT;
    global_check(h.r, h.a, h.size, h.me, true, false);
}

// Checks thread t's held reads; those of the bytes [a, a + size) seeded a CAS there if `cas`.
static void check_held(unsigned t, bool cas, uintptr_t a = 0, unsigned size = 0) {
    Held& h = held[t];
    for (unsigned i = 0; i < h.n; ++i)
        check_read(h.reads[i], cas && h.reads[i].a < a + size && a < h.reads[i].a + h.reads[i].size);
    h.n = 0;
}

static void hold(unsigned t, const HeldRead& r) {
    Held& h = held[t];
    if (h.n == HELD) {   // the oldest is checked now
        check_read(h.reads[0], false);
        for (unsigned i = 1; i < HELD; ++i) h.reads[i - 1] = h.reads[i];
        --h.n;
    }
    h.reads[h.n++] = r;
}

// ---- release and acquire through a location ------------------------------------------------

static uint64_t* marks_of(uint32_t i) {
    return reinterpret_cast<uint64_t*>(gs.base + gs.h->marks) + uint64_t(i) * gs.h->sync_blocks;
}
static uint32_t* list_of(uint32_t i) {
    return reinterpret_cast<uint32_t*>(gs.base + gs.h->lists) + uint64_t(i) * gs.h->sync_blocks;
}

// The SyncObj of address a (claimed if `claim`), or null. Open addressing; when the table is
// full the last entry stands for every further location (releases through them all become
// visible to an acquire through any of them: more permissive, never a false report).
static SyncObj* sync_of(uintptr_t a, bool claim) {
    uint32_t h = uint32_t((a >> 2) * 2654435761u) % (MAX_SYNC - 1);
    for (uint32_t k = 0; k < MAX_SYNC - 1; ++k) {
        SyncObj* s = &gs.h->sync[(h + k) % (MAX_SYNC - 1)];
        uint64_t at = __atomic_load_n(&s->addr, __ATOMIC_ACQUIRE);
        if (at == a) return s;
        if (at) continue;
        if (!claim) return nullptr;
        spin_lock(&gs.h->sync_insert);
        at = __atomic_load_n(&s->addr, __ATOMIC_ACQUIRE);
        if (!at) __atomic_store_n(&s->addr, uint64_t(a), __ATOMIC_RELEASE);
        spin_unlock(&gs.h->sync_insert);
        if (!at || at == a) return s;
    }
    return &gs.h->sync[MAX_SYNC - 1];
}

static uint8_t* scopes_of(uint32_t i) {
    return reinterpret_cast<uint8_t*>(gs.base + gs.h->scopes) + uint64_t(i) * gs.h->sync_blocks;
}

// A release through SyncObj i of what block `block` did up to point p; `scoped`: of block scope
// (where the block released there with device scope too, that stands: more permissive).
static void raise_mark(uint32_t i, SyncObj* s, uint32_t block, uint64_t p, bool scoped) {
    uint64_t& m = marks_of(i)[block];
    uint8_t& scope = scopes_of(i)[block];
    if (!m) scope = scoped;
    else if (!scoped) scope = 0;
    if (!m) {
        list_of(i)[s->count++] = block;
        m = p;
    } else if (point_epoch(p) > point_epoch(m)) {
        m = p;
    } else if (point_epoch(p) == point_epoch(m)) {
        m = join_points(m, p);
    }
}

// Thread tid's read at position seq acquired point p of block `block`.
static void know(uint32_t block, uint64_t p, uint32_t tid, uint32_t seq) {
    Know& k = gs.know[block];
    if (!k.n) gs.known[gs.nknown++] = block;
    for (uint32_t j = 0; j < k.n; ++j) {   // known already, to as many of the block's threads
        const KnowPoint& x = k.p[j];
        if (x.point == p && (x.acq_epoch < chk.epoch || (x.acq_tid == tid && x.acq_seq <= seq))) return;
    }
    KnowPoint np{p, chk.epoch, tid, seq, 0};
    if (k.n < KNOW) {
        k.p[k.n++] = np;
        return;
    }
    uint32_t old = 0;   // full: the point of the oldest interval goes (stricter, never a missed race)
    for (uint32_t j = 1; j < KNOW; ++j)
        if (point_epoch(k.p[j].point) < point_epoch(k.p[old].point)) old = j;
    k.p[old] = np;
}

// Thread tid's strong read of global address a, at position seq: take what was released there
// (unless this thread, or the whole block, took this version already); `scoped`: the read is an
// atomic of block scope. A release of block scope, or an acquire, covers only its own block.
static void acquire(uintptr_t a, uint32_t tid, uint32_t seq, bool scoped) {
    SyncObj* s = sync_of(a, false);
    if (!s) return;
    uint32_t i = uint32_t(s - gs.h->sync);
    if (__atomic_load_n(&s->version, __ATOMIC_ACQUIRE) == gs.seen[i] &&
        (gs.seen_epoch[i] < chk.epoch || gs.seen_tid[i] == tid))
        return;
    spin_lock(&s->lock);
    const uint64_t* marks = marks_of(i);
    const uint32_t* list = list_of(i);
    const uint8_t* scopes = scopes_of(i);
    for (uint32_t k = 0; k < s->count; ++k) {
        uint32_t b = list[k];
        if ((scoped || scopes[b]) && b != gs.block) {
            if (!skipped_scope(b) && gs.nscoped < 8) gs.scoped_from[gs.nscoped++] = b;
            continue;
        }
        know(b, marks[b], tid, seq);
    }
    gs.seen[i] = s->version;
    gs.seen_epoch[i] = chk.epoch;
    gs.seen_tid[i] = tid;
    spin_unlock(&s->lock);
}

// A strong write of global address a: after a fence by this thread, release there what the fence
// covers, and what this thread has acquired; `scoped`: the write is an atomic of block scope. A
// release of block scope passes on only what its own block did.
static void release(uintptr_t a, bool scoped) {
    unsigned t = cur->linear;
    uint32_t fenced = t < 1024 ? gs.fence_epoch[t] : 0;
    if (!fenced) return;
    uint64_t p = point(fenced - 1, t);
    if (gs.fence_clock[t]) {   // the clock the fence found, copied into the pool once
        if (!gs.fence_ref[t] && gs.fence_rows_n == gs.h->clock_len)
            gs.fence_ref[t] = new_clock(gs.fence_rows + size_t(t) * gs.fence_rows_n);
        if (gs.fence_ref[t]) p = clock_point(fenced - 1, gs.fence_ref[t]);   // (pool full: the thread's own)
    }
    SyncObj* s = sync_of(a, true);
    uint32_t i = uint32_t(s - gs.h->sync);
    spin_lock(&s->lock);
    scoped = scoped || gs.fence_block[t];
    if (gs.block < gs.h->sync_blocks) raise_mark(i, s, gs.block, p, scoped);
    for (uint32_t k = 0; k < gs.nknown && !scoped; ++k) {
        const Know& kn = gs.know[gs.known[k]];
        for (uint32_t j = 0; j < kn.n; ++j)
            if (sees(kn.p[j], chk.epoch, t)) raise_mark(i, s, gs.known[k], kn.p[j].point, false);
    }
    __atomic_store_n(&s->version, s->version + 1, __ATOMIC_RELEASE);
    spin_unlock(&s->lock);
}

// The instrumentation calls its hooks before the access, so a strong read acquires only at
// the thread's next global access (or barrier): what its value shows was released by then,
// and nothing of the thread's after the read escapes it.
static void acquire_held(unsigned t) {
    if (t >= 1024 || !gs.acquiring[t]) return;
    uintptr_t a = gs.acquiring[t];
    gs.acquiring[t] = 0;
    acquire(a, t, gs.acquiring_seq[t], gs.acquiring_block[t]);
}

// Thread t arrives on a barrier (a named barrier, an mbarrier, a __syncwarp) or takes in what
// one orders before it. Its held reads are checked now, while its clock is the one they were
// made under, and its strong read is acquired, so that an arrival carries the acquisition;
// and it is moved past its last global access (global accesses do not advance Thread::seq),
// so that the arrival's clock orders that access.
void global_sync(unsigned t) {
    if (!gs.h || t >= 1024 || t >= sched.nthreads) return;
    resolve_same_value(t);
    check_held(t, false);
    acquire_held(t);
    Thread& th = sched.threads[t];
    if (gs.after_epoch[t] == chk.epoch && th.seq < gs.after[t]) th.seq = gs.after[t];
}

// The interval ends: every strong read held is acquired (for the whole block, from the next one).
void global_interval_end() {
    if (!gs.h) return;
    for (unsigned t = 0; t < sched.nthreads && t < 1024; ++t) {
        resolve_same_value(t);
        check_held(t, false);
        acquire_held(t);
    }
}

// Every global access checked mode sees: a strong access synchronises (read: acquire, then
// write: release), and every access is checked against the shadow.
void global_memory(const Region* r, uintptr_t a, unsigned size, uint32_t pc, bool reads, bool writes, bool strong,
                   bool atomic) {
    if (!gs.h || !r->gm) return;
    unsigned t = cur->linear;
    if (t < 1024) resolve_same_value(t);
    acquire_held(t);
    bool plain_read = reads && !writes && !strong;
    if (t < 1024 && held[t].n && !plain_read) check_held(t, chk.cas, a, size);
    bool block_scope = atomic && chk.scope == SCOPE_BLOCK;
    uint16_t flags = uint16_t((t & TID_MASK) | (strong ? STRONG_BIT : 0) | (atomic ? ATOMIC_BIT : 0) |
                              (chk.collective ? COLLECTIVE_BIT : 0) | (block_scope ? BLOCK_SCOPE_BIT : 0));
    GAcc me{gs.block + 1, chk.epoch, pc, flags, chk.warp_epoch[t / 32], cur->seq};
    if (t < 1024) {
        gs.after[t] = cur->seq + 1;
        gs.after_epoch[t] = chk.epoch;
    }
    if (plain_read && t < 1024) {
        hold(t, HeldRead{r, a, size, me});
        return;
    }
    if (strong && reads && t < 1024) {
        gs.acquiring[t] = a;
        gs.acquiring_seq[t] = cur->seq;
        gs.acquiring_block[t] = block_scope;
    }
    global_check(r, a, size, me, reads, writes);
    if (strong && writes) release(a, block_scope);
}

}  // namespace kc
