// Checked mode's checks of the async proxy (kc_check.h): what the TMA writes and wgmma reads in
// shared memory. The runtime's own units do both (kc_async.cpp), so the instrumentation never
// sees them; kc_async.cpp calls the hooks here instead, byte range by byte range.
//
// The model (PTX ISA, "Memory consistency model": the async proxy; mbarrier complete-tx):
//  - a TMA copy's write to shared memory is made by the async proxy and is visible to a
//    thread only once that thread has observed the completion of the barrier phase the copy
//    completes its bytes on: its own try_wait/test_wait of that phase succeeded, or, since a
//    __syncthreads() orders everything before it, any thread's did before a barrier they
//    both passed. A load or store of such a byte before then is a TileNotReadyError; so is a
//    wgmma operand read when a warp of the warpgroup has not observed it (each warp issues
//    its own part of the multiply on a GPU);
//  - a wgmma reads its operand tiles from its issue until the warpgroup's wgmma.wait_group
//    retires its group (wait_group N: all but the newest N committed groups are complete).
//    A store to those bytes in that window, by a thread or a TMA copy, is a
//    WgmmaOperandRaceError;
//  - a TMA store (cp.async.bulk.tensor, shared to global, .bulk_group) reads its source box from
//    its issue until the issuing thread's cp.async.bulk.wait_group.read N (or wait_group N)
//    retires its bulk group (bulk groups are per thread: all but the thread's newest N
//    committed groups have finished reading). A store to those bytes in that window, by any
//    thread or a TMA copy, is a TmaStoreSourceRaceError;
//  - proxy fences. A thread's st.shared (or any store of the kernel) is made by the generic
//    proxy; the TMA store and wgmma read through the async proxy, and "Accessing the same memory
//    location across multiple proxies needs a cross-proxy fence. For the async proxy,
//    fence.proxy.async should be used to synchronize memory between generic proxy and the async
//    proxy" (PTX ISA, cp.async.bulk's and wgmma's "Async Proxy"; wgmma.fence: "An async proxy
//    fence must be used to establish an ordering between prior writes to shared memory matrices
//    and subsequent reads of the same matrices in a wgmma.mma_async instruction"). Such a fence
//    "take[s] effect within a single thread" and "composes with other forms of synchronization"
//    (fence.proxy): the writer fences after its write, and a barrier orders its fence before the
//    async operation. So a byte the async proxy reads whose last write was a thread's store
//    ordered before the read (the race check's order: an older interval, a __syncwarp, the
//    barriers' clocks, program order; before the TMA store's issuing thread, or before a thread
//    of each warp of the wgmma's warpgroup) needs a fence.proxy.async of that writer after the
//    write and itself so ordered; none is a ProxyFenceError. Bytes the TMA wrote (the async
//    proxy's own, completing on an mbarrier) need none.
// Each byte of the shared window (kc_ptx.h) has a Mark: the last TMA copy into it, the
// wgmmas (of up to two warpgroups) reading it, and the last TMA store reading it. Phases are
// counted per barrier and block: a copy completes on the phase its barrier is in when it is
// issued (the CPU runtime performs it at once); a successful wait observes every phase
// completed so far. Bulk groups are counted per thread, as wgmma groups are.
//
// Proxy fences are judged by program order and the barriers' clocks, not by the order this run
// took: each thread keeps its last FENCES fences' positions (interval, seq: Thread::seq counts a
// fence as a step, so a fence right after a barrier's arrival is not before it); the write's
// position comes from the race check's shadow (its last write, with whether the async proxy
// made it). A writer that has already fenced for its next box when the store of this one is
// issued does not hide the fence that counts: any kept fence after the write and ordered before
// the read does.
//
// What this does not see: a wait observed through another thread by anything but a
// __syncthreads() (a __syncwarp, an mbarrier chain), which it reports as not observed; a
// wgmma's group retired by a wait_group the writer is not ordered after (the check uses the
// order this run took, in which each wait_group that retires a group lets the other threads
// run first), and likewise a TMA store's group retired by a cp.async.bulk.wait_group the writer
// is not ordered after (a missing barrier after the wait is seen where the wait's yield lets
// the writer run inside the window, kc_async.cpp: bulk_wait); of two TMA stores pending on
// one byte, only the later; a TMA store's source reads are not race-checked against the
// threads' writes before it (a missing barrier before the store); wgmma operand reads are not
// race-checked against earlier stores, nor checked for initialization: a kernel may multiply
// chunks of a slot it did not load (past the matrix's last column) whose products it never
// stores, as kernels/hopper.cu does. Of proxy fences: a write not ordered before the async read
// at all (a missing barrier: a race this does not check) is passed, as is a write whose writer
// has fenced more than FENCES times since (its fence after the write forgotten: the lenient
// verdict); a TMA copy into bytes a thread wrote (generic then async writes) is not checked for
// a fence. A fence.proxy.async.global orders nothing in shared memory and does not count (the
// message names it where it stood where a fence of shared memory was needed).
#include "kc_check.h"

namespace kc {

constexpr unsigned MAX_BARS = 64, MAX_WARPGROUPS = 8, FENCES = 8;
// A fence.proxy.async: its place in its thread's program, its source line (as the translation
// passes it: a call the compiler merged with another's has one pc for both lines), and whether
// it is a fence.proxy.async.global, which orders nothing in shared memory.
struct FenceRec {
    AccessRec at;
    uint32_t line;
    bool global_only;
};

struct Mark {
    uint32_t gen;                     // the block it was written in (as.gen); another's is blank
    uint32_t copy_line, copy_phase;   // the last TMA copy into the byte: its line, the phase it completes on,
    uint32_t copy_pc;                 // its place in the library (pc_of: its helpers' calls)
    uint16_t copy_tid;
    uint8_t copy_bar, copy_set;
    uint8_t copy_unannounced;         // its bytes count on a phase no expect_tx announced (an earlier one did)
    uint16_t fills;                   // TMA copies into the byte so far: which fill a wgmma read
    // wgmmas reading it, by warpgroup: the group, the fill they read (fills at the read; basis 0: no
    // copy had written the byte yet), whether the warpgroup had read that same fill in an earlier
    // group (a stage read again after it was handed back), and the wgmma's issue (issues[])
    struct { uint32_t line, pc, group, issue; uint16_t fill; uint8_t wg, set, basis, reread; } rd[2];
    struct { uint32_t line, pc, group; uint16_t tid; uint8_t set; } st;   // the last TMA store reading it
};

static struct {
    Mark* marks = nullptr;
    uint32_t gen = 0;                 // blocks this worker began: a Mark of an earlier one is blank
    uint64_t span = 0, lo = ~uint64_t(0), hi = 0;   // the window's bytes; those marked in this block
    const void* bars[MAX_BARS];
    unsigned nbars = 0, n = 0;
    uint32_t completed[MAX_BARS];     // phases each barrier completed in this block
    uint32_t floor[MAX_BARS];         // phases every thread has observed (a __syncthreads after a wait)
    uint32_t* seen = nullptr;         // n x MAX_BARS: phases thread t observed complete
    uint32_t committed[1024];         // wgmma groups each thread committed
    uint32_t retired[MAX_WARPGROUPS]; // groups of each warpgroup below this one are complete
    uint32_t retired_by[1024];        // ... as each thread's own wait_group found them
    uint32_t bulk_committed[1024];    // bulk groups (TMA stores) each thread committed
    uint32_t bulk_retired[1024];      // each thread's bulk groups below this one have finished reading
    uint32_t copy_pc = 0, wgmma_pc = 0;
    // each thread's last FENCES fence.proxy.async, as accesses at their positions (ring), and
    // how many it executed in this block
    FenceRec fences[1024][FENCES];
    uint32_t nfences[1024];
    int checked_bar = -1;             // the (barrier, phase) a wgmma's warps were last found to have observed
    uint32_t checked_phase = 0;
    // Each thread's last successful wait on each barrier: the parity it asked for (+1; 0: none) and
    // its line, for the message of a tile read before its phase (n x MAX_BARS, beside seen).
    uint8_t* waited = nullptr;
    uint32_t* wait_line = nullptr;
    uint32_t max_seen[MAX_BARS];      // phases any thread observed complete
    uint32_t expect_phase[MAX_BARS];  // the phase of the barrier's last expect_tx (+1; 0: none yet)
    uint32_t expect_line[MAX_BARS], init_line[MAX_BARS], init_count[MAX_BARS];
    uint32_t wgmma_issue = 0;         // wgmmas issued in this block
    // The last ISSUES wgmmas' issue: each thread of the warpgroup's position then (it waits inside
    // the wgmma while the last one computes it), to ask whether the warpgroup's release of a stage
    // ordered the read before a copy that refills it.
    struct Issue { uint32_t id, epoch; uint32_t seq[128]; uint16_t wepoch[4]; } issues[64];
} as;

// Each thread's pending wgmma accumulators (check_wgmma_accumulators, below).
constexpr unsigned ACC_WGMMAS = 4, ACC_MAX = 128;
struct AccRecord {
    uint32_t group, line, pc, count;   // its commit group (as.committed at its issue), its wgmma
    uintptr_t lo, hi;                  // the span of its addresses, for the quick test
    uintptr_t at[ACC_MAX];
};
static AccRecord* acc[1024];           // each thread's records (allocated at its first wgmma)
static uint8_t nacc[1024];
uint32_t accumulators_pending = 0;     // records of this block's threads: on_access's quick test

static int bar_index(const void* bar, bool add) {
    for (unsigned b = 0; b < as.nbars; ++b)
        if (as.bars[b] == bar) return int(b);
    if (!add || as.nbars == MAX_BARS) return -1;   // past 64 barriers of a block: not tracked
    as.bars[as.nbars] = bar;
    as.completed[as.nbars] = as.floor[as.nbars] = as.max_seen[as.nbars] = as.expect_phase[as.nbars] = 0;
    as.init_line[as.nbars] = as.init_count[as.nbars] = 0;
    return int(as.nbars++);
}

static uint32_t* seen_row(unsigned t) {
    if (as.n != sched.nthreads) {
        free(as.seen);
        free(as.waited);
        free(as.wait_line);
        as.n = sched.nthreads;
        as.seen = static_cast<uint32_t*>(calloc(size_t(as.n) * MAX_BARS, sizeof(uint32_t)));
        as.waited = static_cast<uint8_t*>(calloc(size_t(as.n) * MAX_BARS, 1));
        as.wait_line = static_cast<uint32_t*>(calloc(size_t(as.n) * MAX_BARS, sizeof(uint32_t)));
    }
    return as.seen + size_t(t) * MAX_BARS;
}

static uint32_t observed(unsigned t, int b) {
    uint32_t s = seen_row(t)[b];
    return s > as.floor[b] ? s : as.floor[b];
}

// The Mark of window byte `off`, the window allocated at the first use (calloc: untouched pages
// cost nothing); null past its end. A Mark left by an earlier block is blanked at its first use in
// this one, rather than every Mark at each block's start (a 200 KB window's Marks are some 17 MB).
static Mark* mark(uint64_t off) {
    if (!as.marks) {
        uint64_t dyn = shared_offset(dynamic_smem + DYNAMIC_SHARED_CAPACITY + 4096);
        uint64_t stat = kc_shared_span() ? shared_offset(reinterpret_cast<char*>(kc_shared_lo()) + kc_shared_span()) : 0;
        as.span = dyn > stat ? dyn : stat;
        as.marks = static_cast<Mark*>(calloc(as.span, sizeof(Mark)));
    }
    if (off >= as.span) return nullptr;
    if (off < as.lo) as.lo = off;
    if (off + 1 > as.hi) as.hi = off + 1;
    Mark* m = &as.marks[off];
    if (m->gen != as.gen) {
        *m = Mark{};
        m->gen = as.gen;
    }
    return m;
}

// ---- hooks: the block, barriers, mbarrier phases ------------------------------------------------
void check_async_block_start() {
    as.gen++;
    as.lo = ~uint64_t(0);
    as.hi = 0;
    as.nbars = 0;
    if (as.seen) {
        memset(as.seen, 0, size_t(as.n) * MAX_BARS * sizeof(uint32_t));
        memset(as.waited, 0, size_t(as.n) * MAX_BARS);
    }
    as.wgmma_issue = 0;
    memset(nacc, 0, sizeof nacc);
    accumulators_pending = 0;
    memset(as.committed, 0, sizeof as.committed);
    memset(as.retired, 0, sizeof as.retired);
    memset(as.retired_by, 0, sizeof as.retired_by);
    memset(as.bulk_committed, 0, sizeof as.bulk_committed);
    memset(as.bulk_retired, 0, sizeof as.bulk_retired);
    memset(as.nfences, 0, sizeof as.nfences);
}

void check_async_interval_end() {   // a __syncthreads(): what one thread observed, all have
    if (!as.seen || as.n != sched.nthreads) return;
    for (unsigned b = 0; b < as.nbars; ++b)
        for (unsigned t = 0; t < as.n; ++t)
            if (as.seen[size_t(t) * MAX_BARS + b] > as.floor[b]) as.floor[b] = as.seen[size_t(t) * MAX_BARS + b];
}

void check_async_init(const void* bar, uint32_t count, int line) {   // mbarrier.init: phases count from zero again
    int b = bar_index(bar, true);
    if (b < 0) return;
    as.completed[b] = as.floor[b] = as.max_seen[b] = as.expect_phase[b] = 0;
    as.init_line[b] = uint32_t(line);
    as.init_count[b] = count;
    for (unsigned t = 0; t < sched.nthreads; ++t) {
        seen_row(t)[b] = 0;
        as.waited[size_t(t) * MAX_BARS + b] = 0;
    }
}

void check_async_expect_tx(const void* bar, int line) {   // an expect_tx: its bytes count on the current phase
    int b = bar_index(bar, true);
    if (b < 0) return;
    as.expect_phase[b] = as.completed[b] + 1;
    as.expect_line[b] = uint32_t(line);
}

uint32_t check_async_phases(const void* bar) {
    int b = bar_index(bar, false);
    return b < 0 ? 0 : as.completed[b];
}

// Phases of the barrier that completed and thread t never observed (0: it is up to date).
uint32_t check_async_unobserved(const void* bar, unsigned t) {
    int b = bar_index(bar, false);
    return b < 0 || t >= sched.nthreads ? 0 : as.completed[b] - observed(t, b);
}

void check_async_phase_complete(const void* bar) {
    int b = bar_index(bar, true);
    if (b >= 0) as.completed[b]++;
}

void check_async_acquire(const void* bar, uint32_t parity, int line) {   // a wait that found its phase complete
    int b = bar_index(bar, true);
    if (b < 0) return;
    seen_row(cur->linear)[b] = as.completed[b];
    if (as.completed[b] > as.max_seen[b]) as.max_seen[b] = as.completed[b];
    as.waited[size_t(cur->linear) * MAX_BARS + b] = uint8_t(parity + 1);
    as.wait_line[size_t(cur->linear) * MAX_BARS + b] = uint32_t(line);
}

// A writer of the wgmma's own warpgroup is ordered by its own wait_group (program order);
// any other by the warpgroup's first.
static uint32_t retired_for(unsigned wg) {
    return cur->linear / 128 == wg ? as.retired_by[cur->linear] : as.retired[wg];
}

// ---- findings ----------------------------------------------------------------------------------
// The shared array window byte `off` lies in, and its index there (ix: 128 bytes).
static const char* where(char* ix, uint64_t off) {
    const Region* r = region_at(shared_address(off), 1, 0, READ);
    if (!is_shared(r)) {
        snprintf(ix, 64, "[%llu]", (unsigned long long)off);
        return "shared memory";
    }
    uint64_t g = r->granule ? r->granule : r->elem_size;
    index_json(ix, 128, r, element_of(r, uint64_t(static_cast<char*>(shared_address(off)) - r->base) / g));
    return r->name;
}

// Of threads lo .. lo + n - 1 (a reader, or a warp of a wgmma's warpgroup), the one whose last wait on
// barrier b is the latest, or lo where none waited: whose wait the message names.
static unsigned last_waiter(unsigned lo, unsigned n, int b) {
    unsigned best = lo;
    for (unsigned t = lo; t < lo + n && t < as.n; ++t)
        if (as.waited[size_t(t) * MAX_BARS + b] && observed(t, b) >= observed(best, b)) best = t;
    return best;
}

// A read of bytes the TMA copy of Mark m writes, before the reader observed the copy's phase. Where
// the copy was issued onto a phase that no expect_tx announced, after an earlier phase's expect_tx
// completed without its bytes, the cause is that expect_tx's count (tx_short); else the reader's
// wait: none on that barrier, or one for the wrong parity or phase (tile_unwaited).
// The mbarrier at `bar` as the kernel names it: its shared array and index ("full[1]"), or "" where
// it lies in no array checked mode knows (a JSON string's contents: an identifier and digits).
const char* barrier_name(const void* bar) {
    static char out[160];
    const Region* r = region_at(bar, 8, 0, READ);
    out[0] = 0;
    if (!is_shared(r) || !r->elem_size) return out;
    uint64_t off = uint64_t(static_cast<const char*>(bar) - r->base);
    int k = snprintf(out, sizeof out, "%s", r->name);
    if (r->bytes > r->elem_size) {   // an array: its index, in elements (a byte array's in bytes)
        char ix[64];
        index_json(ix, sizeof ix, r, element_of(r, off / (r->granule ? r->granule : r->elem_size)));
        ix[0] = '[';
        snprintf(out + k, sizeof out - k, "%s", ix);
    }
    return out;
}

[[noreturn]] static void not_ready(uint64_t off, const Mark& m, unsigned thread, uint32_t pc, int line,
                                   const char* op, int wg) {
    char buf[1024], ix[128];
    const char* name = where(ix, off);
    unsigned b = m.copy_bar, w = last_waiter(thread, wg >= 0 ? 32 : 1, int(b));
    if (m.copy_unannounced) {
        finding(buf, sizeof buf, Finding::tx_short,
                "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,"
                "\"address\":%llu,\"phase\":%u,\"copy_thread\":%u,\"copy_line\":%u,\"expect_line\":%u,\"barrier\":\"%s\"}",
                name, ix, my_status->block, thread, pc, line, (unsigned long long)shared_offset(as.bars[b]),
                m.copy_phase, m.copy_tid, m.copy_line, as.expect_line[b], barrier_name(as.bars[b]));
        report(buf);
    }
    finding(buf, sizeof buf, Finding::tile_unwaited,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"op\":\"%s\","
            "\"warpgroup\":%d,\"address\":%llu,\"phase\":%u,\"observed\":%u,\"copy_thread\":%u,\"copy_line\":%u,"
            "\"copy_pc\":%u,\"waited\":%d,\"wait_line\":%u,\"barrier\":\"%s\"}",
            name, ix, my_status->block, thread, pc, line, op, wg,
            (unsigned long long)shared_offset(as.bars[b]), m.copy_phase, observed(w, b),
            m.copy_tid, m.copy_line, m.copy_pc, int(as.waited[size_t(w) * MAX_BARS + b]) - 1,
            as.wait_line[size_t(w) * MAX_BARS + b], barrier_name(as.bars[b]));
    report(buf);
}

// released: the write is a TMA copy that the warpgroup's own hand-back of the stage (an arrival its
// producer waited for) ordered after the wgmma's issue, but not after its wait_group.
[[noreturn]] static void overwritten(uint64_t off, const Mark& m, int k, uint32_t pc, int line, const char* op,
                                     bool released = false) {
    char buf[1024], ix[128];
    const char* name = where(ix, off);
    finding(buf, sizeof buf, Finding::wgmma_overwrite,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"op\":\"%s\","
            "\"warpgroup\":%u,\"wgmma_line\":%u,\"wgmma_pc\":%u,\"group\":%u,\"retired\":%u,\"released\":%d}",
            name, ix, my_status->block, cur->linear, pc, line, op, m.rd[k].wg,
            m.rd[k].line, m.rd[k].pc, m.rd[k].group, retired_for(m.rd[k].wg), int(released));
    report(buf);
}

// ---- a TMA copy into a stage: what its bytes held before (kc_check_async.cpp's model, the pipeline) --
// A copy lands on bytes that an earlier copy filled (fill F, phase p of barrier B) and, maybe, a wgmma
// still reads. Whose mistake it is, first found first:
//  - the wgmma read the stage before this copy's fill had arrived: no copy had written the bytes
//    yet, or it read F again in a later group after its warpgroup had read F before (so had handed
//    the stage back): its wait let it through a phase early (missing, wrong parity, phase count
//    off): tile_stale, a TileNotReadyError;
//  - the warpgroup's hand-back of the stage (an arrival the copying thread waited for) is ordered
//    after the wgmma's issue but its group is still in flight: it handed the stage back before its
//    wgmma.wait_group: wgmma_overwrite, released;
//  - otherwise nothing orders the consumers' use of F before the copy: the producer refilled the
//    stage without waiting for its release (its empty barrier), stage_overwrite; and so too where no
//    thread has yet observed F's phase at all (a fill overwritten before anyone could read it).
static bool issued_before(const Mark& m, int k, unsigned t) {
    const auto& is = as.issues[m.rd[k].issue % 64];
    if (is.id != m.rd[k].issue) return true;   // forgotten (64 wgmmas on): as the race has it
    for (unsigned i = 0; i < 128; ++i) {
        unsigned u = m.rd[k].wg * 128u + i;
        AccessRec a{is.epoch, uint16_t(u), is.wepoch[i / 32], 0, is.seq[i], 0, 0, 0};
        if (u != t && orders_before(a, t)) return true;
    }
    return false;
}

[[noreturn]] static void stale_read(uint64_t off, const Mark& m, int k, unsigned b, int line) {
    char buf[1024], ix[128];
    const char* name = where(ix, off);
    unsigned wg = m.rd[k].wg, w = last_waiter(wg * 128, 128, int(b));
    finding(buf, sizeof buf, Finding::tile_stale,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%u,\"warpgroup\":%u,"
            "\"address\":%llu,\"phase\":%u,\"basis\":%u,\"observed\":%u,\"waited\":%d,\"wait_line\":%u,"
            "\"copy_thread\":%u,\"copy_line\":%d,\"copy_pc\":%u,\"barrier\":\"%s\"}",
            name, ix, my_status->block, wg * 128, m.rd[k].pc, m.rd[k].line, wg,
            (unsigned long long)shared_offset(as.bars[b]), as.completed[b], unsigned(m.rd[k].basis), observed(w, b),
            int(as.waited[size_t(w) * MAX_BARS + b]) - 1, as.wait_line[size_t(w) * MAX_BARS + b], cur->linear, line,
            as.copy_pc, barrier_name(as.bars[b]));
    report(buf);
}

// reader -1: F, filled for phase `old` of barrier `ob`, which no thread has observed, overwritten.
[[noreturn]] static void stage_overwrite(uint64_t off, const Mark& m, int k, unsigned b, int line) {
    char buf[1024], ix[128];
    const char* name = where(ix, off);
    finding(buf, sizeof buf, Finding::stage_overwrite,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"address\":%llu,"
            "\"phase\":%u,\"reader\":%d,\"wgmma_line\":%u,\"group\":%u,\"old_address\":%llu,\"old_phase\":%u,"
            "\"old_line\":%u,\"expected\":%u,\"barrier\":\"%s\"}",
            name, ix, my_status->block, cur->linear, as.copy_pc, line, (unsigned long long)shared_offset(as.bars[b]),
            as.completed[b], k < 0 ? -1 : int(m.rd[k].wg), k < 0 ? 0u : m.rd[k].line, k < 0 ? 0u : m.rd[k].group,
            (unsigned long long)shared_offset(as.bars[m.copy_bar]), m.copy_phase, m.copy_line, as.init_count[b],
            barrier_name(as.bars[b]));
    report(buf);
}

static void refill(uint64_t off, const Mark& m, unsigned b, int line) {
    for (int k = 0; k < 2; ++k) {
        if (!m.rd[k].set || m.rd[k].group < retired_for(m.rd[k].wg)) continue;
        if (!m.rd[k].basis || m.rd[k].reread) stale_read(off, m, k, b, line);
        if (issued_before(m, k, cur->linear)) overwritten(off, m, k, as.copy_pc, line, "copy", true);
        stage_overwrite(off, m, k, b, line);
    }
    if (m.copy_set && as.max_seen[m.copy_bar] <= m.copy_phase &&
        !(m.copy_bar == b && m.copy_phase == as.completed[b]))
        stage_overwrite(off, m, -1, b, line);
}

[[noreturn]] static void store_overwritten(uint64_t off, const Mark& m, uint32_t pc, int line, const char* op) {
    char buf[1024], ix[128];
    const char* name = where(ix, off);
    finding(buf, sizeof buf, Finding::tma_store_overwrite,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"op\":\"%s\","
            "\"store_line\":%u,\"store_pc\":%u,\"store_thread\":%u,\"group\":%u,\"retired\":%u}",
            name, ix, my_status->block, cur->linear, pc, line, op, m.st.line, m.st.pc, unsigned(m.st.tid), m.st.group,
            as.bulk_retired[m.st.tid]);
    report(buf);
}

static void check_in_flight(uint64_t off, const Mark& m, uint32_t pc, int line, const char* op) {
    for (int k = 0; k < 2; ++k)
        if (m.rd[k].set && m.rd[k].group >= retired_for(m.rd[k].wg)) overwritten(off, m, k, pc, line, op);
    if (m.st.set && m.st.group >= as.bulk_retired[m.st.tid]) store_overwritten(off, m, pc, line, op);
}

// ---- proxy fences: fence.proxy.async (kc_async.cpp: fence_proxy_async) ------------------------------
// The running thread's fence, kept as an access of its own at its position; seq counts it as a
// step, so that a barrier's arrival right after it orders it and one right before it does not.
void check_proxy_fence(int line, bool global_only) {
    unsigned t = cur->linear;
    if (t >= 1024) return;
    as.fences[t][as.nfences[t]++ % FENCES] = FenceRec{
        AccessRec{chk.epoch, uint16_t(t), chk.warp_epoch[t / 32], cur->asm_pc ? pc_of(cur->asm_pc) : 0u, cur->seq, 0, 0, 0},
        uint32_t(line), global_only};
    cur->seq++;
}

static bool later(const AccessRec& f, const AccessRec& w) {   // in one thread's program order
    return f.epoch > w.epoch || (f.epoch == w.epoch && f.seq > w.seq);
}

// Whether access or fence a is ordered before the async proxy's read on behalf of threads lo ..
// lo + n - 1: before a thread of each of their warps (a wgmma's warpgroup: each warp issues its
// part of the multiply on a GPU, as tile_unwaited has it), or before the one issuing thread.
static bool before_read(const AccessRec& a, unsigned lo, unsigned n) {
    for (unsigned w = lo; w < lo + n; w += 32) {
        bool found = false;
        for (unsigned t = w; t < w + 32 && t < lo + n && t < sched.nthreads && !found; ++t)
            found = orders_before(a, t);
        if (!found) return false;
    }
    return true;
}

// The fence check of thread write w, which the async proxy now reads on behalf of threads lo ..
// lo + n - 1 (the TMA store's issuer, or the wgmma's warpgroup). `missing`: w is ordered before
// the read, and no fence.proxy.async of its writer that orders shared memory lies after it and
// is ordered before the read too. `late`: the writer's first kept fence after w (not so ordered),
// if any; `global`: its fence.proxy.async.global after w and so ordered, which would have been the
// one had it ordered shared memory, if any (both for the message).
struct FenceVerdict {
    bool missing = false;
    const FenceRec* late = nullptr;
    const FenceRec* global = nullptr;
};

static FenceVerdict fence_verdict(const AccessRec& w, unsigned lo, unsigned n) {
    FenceVerdict v;
    if (!w.epoch || w.async_proxy || w.tid >= 1024 || !before_read(w, lo, n)) return v;
    uint32_t k = as.nfences[w.tid], kept = k < FENCES ? k : FENCES;
    bool forgotten = k > FENCES;   // fences older than the kept ones were executed
    for (uint32_t j = 0; j < kept; ++j) {   // newest first
        const FenceRec& f = as.fences[w.tid][(k - 1 - j) % FENCES];
        if (!later(f.at, w)) {   // this one and every older one precede the write
            forgotten = false;
            break;
        }
        bool ordered = before_read(f.at, lo, n);
        if (f.global_only) {
            if (ordered) v.global = &f;
            continue;
        }
        if (ordered) return v;
        v.late = &f;
    }
    // The kept fences all follow the write and none is ordered before the read, but an older one,
    // forgotten, may have been both: passed (the lenient verdict).
    v.missing = !forgotten;
    return v;
}

[[noreturn]] static void unfenced_read(const Region* r, uint64_t elem, const AccessRec& w, const char* op,
                                       unsigned issuer, int wg, int line, uint32_t op_pc, const FenceVerdict& v) {
    char buf[1024], ix[128];
    index_json(ix, sizeof ix, r, element_of(r, elem));
    finding(buf, sizeof buf, Finding::proxy_fence,
            "\"array\":\"%s\",\"index\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u,\"op\":\"%s\",\"issuer\":%u,"
            "\"warpgroup\":%d,\"async_line\":%d,\"async_pc\":%u,\"fence_pc\":%u,\"fence_line\":%u,"
            "\"global_fence_pc\":%u,\"global_fence_line\":%u}",
            r->name, ix, my_status->block, unsigned(w.tid), w.pc, op, issuer, wg, line, op_pc,
            v.late ? v.late->at.pc : 0u, v.late ? v.late->line : 0u, v.global ? v.global->at.pc : 0u,
            v.global ? v.global->line : 0u);
    report(buf);
}

// The async proxy reads bytes [off, off + size) of the window: each shared element they lie in,
// against its last write (the race check's shadow).
static void check_proxy_read(uint64_t off, uint32_t size, const char* op, unsigned lo, unsigned n, int wg, int line,
                             uint32_t op_pc) {
    char* p = static_cast<char*>(shared_address(off));
    // A wgmma reads thousands of elements of one array: the last one's region, while it holds p (shared
    // arrays do not overlap), saves region_at's search.
    static Region* last = nullptr;
    Region* r = last && is_shared(last) && p >= last->base && p + size <= last->base + last->bytes
                ? last : region_at(p, size, op_pc, READ);
    if (!is_shared(r) || !r->shadow) return;
    last = r;
    if (!r->generic_written) return;   // the common case: tiles only the TMA filled
    uint64_t g = r->granule ? r->granule : r->elem_size, o = uint64_t(p - r->base);
    for (uint64_t e = o / g; e <= (o + size - 1) / g && e < r->shadow_len; ++e) {
        const AccessRec& w = r->shadow[e].w;
        if (!w.epoch || w.async_proxy) continue;   // unwritten, or the TMA's: no fence to look for
        FenceVerdict v = fence_verdict(w, lo, n);
        if (v.missing) unfenced_read(r, e, r->shadow[e].w, op, lo, wg, line, op_pc, v);
    }
}

// ---- a thread's own loads and stores (kc_check_access.cpp: on_access) -----------------------------
void check_async_access(const void* p, unsigned size, uint32_t pc, Op op) {
    if (!as.marks) return;
    uint64_t off = shared_offset(p);
    if (off + size <= as.lo || off >= as.hi) return;
    for (uint64_t a = off; a < off + size && a < as.span; ++a) {
        const Mark& m = as.marks[a];
        if (m.gen != as.gen) continue;   // an earlier block's: blank
        if (m.copy_set && observed(cur->linear, m.copy_bar) <= m.copy_phase)
            not_ready(a, m, cur->linear, pc, 0, op == READ ? "read" : "write", -1);
        if (op == WRITE) check_in_flight(a, m, pc, 0, "write");
    }
}

// ---- the TMA (kc_async.cpp: tma_load_2d) ----------------------------------------------------------
// Before the copy: its box must lie inside the shared array it lands in.
void check_tma_box(uint64_t dst, const CpuTensorMap* m, int32_t x, int32_t y, int line, const void* ret) {
    as.copy_pc = ret ? pc_of(ret) : 0;
    uint32_t rows = box_taken(m->box_rows, m->skip[0]);
    uint64_t bytes = uint64_t(m->box_cols) * m->element_size * rows;
    char* p = static_cast<char*>(shared_address(dst));
    Region* r = region_at(p, 1, as.copy_pc, WRITE);
    if (!is_shared(r)) return;   // outside shared memory: kc_async.cpp refuses it
    int64_t off = p - r->base;
    if (off >= 0 && uint64_t(off) + bytes <= r->bytes) return;
    static char via[256];
    snprintf(via, sizeof via,
             "the %u x %u box (%llu bytes) of the tensor map, corner (x %d, y %d), that cp.async.bulk.tensor "
             "writes at shared offset %llu, bytes %lld to %lld of %s",
             rows, m->box_cols, (unsigned long long)bytes, x, y, (unsigned long long)dst, (long long)off,
             (long long)(off + int64_t(bytes) - 1), r->name);
    chk.via = via;
    int64_t first = off < 0 ? off : int64_t(r->bytes);   // the first byte outside
    outside(r, first, r->elem_size, as.copy_pc, "write", uint32_t(line));
}

// One element the copy writes (after its swizzle), completing on the barrier at window offset bar.
void check_tma_write(uint64_t off, uint32_t size, uint64_t bar, int line) {
    int b = bar_index(shared_address(bar), true);
    for (uint64_t a = off; a < off + size; ++a) {
        Mark* m = mark(a);
        if (!m) continue;
        if (b >= 0) refill(a, *m, unsigned(b), line);
        check_in_flight(a, *m, as.copy_pc, line, "copy");
        if (b < 0) continue;
        // Announced by an earlier phase's expect_tx, which completed without these bytes.
        m->copy_unannounced = as.expect_phase[b] && as.expect_phase[b] <= as.completed[b];
        m->fills++;
        m->copy_line = uint32_t(line);
        m->copy_pc = as.copy_pc;
        m->copy_phase = as.completed[b];
        m->copy_tid = uint16_t(cur->linear);
        m->copy_bar = uint8_t(b);
        m->copy_set = 1;
    }
    // The issuing thread's write, to the race and initialization checks.
    char* p = static_cast<char*>(shared_address(off));
    Region* r = region_at(p, size, as.copy_pc, WRITE);
    if (!is_shared(r)) return;
    uint64_t g = r->granule ? r->granule : r->elem_size, o = uint64_t(p - r->base);
    chk.async_write = true;   // the async proxy's write: the async proxy may read it with no proxy fence
    for (uint64_t e = o / g; e <= (o + size - 1) / g && e < r->shadow_len; ++e)
        shared_element(r, e, as.copy_pc, WRITE, false, false);
    chk.async_write = false;
}

// The copy's bytes are in place and about to complete on the barrier: as an arrival of the
// issuing thread, it orders them before what the barrier's waiters do (kc_check_races.cpp).
void check_tma_done(uint64_t bar) {
    cur->seq++;
    check_mbarrier_arrive(shared_address(bar));
}

// ---- wgmma (kc_async.cpp: multiply) -----------------------------------------------------------------
void check_wgmma_begin(const void* ret) {
    as.wgmma_pc = ret ? pc_of(ret) : 0;
    as.checked_bar = -1;
    // Every other thread of the warpgroup waits inside the wgmma: its position is its issue's.
    unsigned wg = cur->linear / 128;
    auto& is = as.issues[++as.wgmma_issue % 64];
    is.id = as.wgmma_issue;
    is.epoch = chk.epoch;
    // The issue is a step of each thread (as a fence is): an arrival right after it orders it.
    for (unsigned i = 0; i < 128 && wg * 128 + i < sched.nthreads; ++i) is.seq[i] = sched.threads[wg * 128 + i].seq++;
    for (unsigned w = 0; w < 4; ++w) is.wepoch[w] = chk.warp_epoch[(wg * 128) / 32 + w];
}

// One operand element of `size` bytes (2, or 4 for tf32) at window offset off, read by
// warpgroup wg's wgmma at `line`.
void check_wgmma_operand(uint64_t off, uint32_t size, unsigned wg, int line) {
    check_proxy_read(off, size, "wgmma", wg * 128, 128, int(wg), line, as.wgmma_pc);
    for (uint64_t a = off; a < off + size; ++a) {
        Mark* m = mark(a);
        if (!m) continue;
        if (m->copy_set && !(as.checked_bar == m->copy_bar && as.checked_phase == m->copy_phase)) {
            for (unsigned w = 0; w < 4; ++w) {   // each warp: one of its threads has observed the phase
                bool ok = false;
                for (unsigned l = 0; l < 32 && !ok; ++l) ok = observed(wg * 128 + w * 32 + l, m->copy_bar) > m->copy_phase;
                if (!ok) not_ready(a, *m, wg * 128 + w * 32, as.wgmma_pc, line, "wgmma", int(wg));
            }
            as.checked_bar = m->copy_bar;
            as.checked_phase = m->copy_phase;
        }
        // Read until the group this wgmma joins is retired: the warpgroup's own older mark, or a
        // retired one, gives way.
        uint32_t group = as.committed[cur->linear];
        int k = 0;
        if (m->rd[0].set && m->rd[0].wg != wg && m->rd[0].group >= as.retired[m->rd[0].wg]) k = 1;
        bool reread = m->rd[k].set && m->rd[k].wg == wg && m->rd[k].fill == m->fills && m->rd[k].group < group;
        m->rd[k] = {uint32_t(line), as.wgmma_pc, group, as.wgmma_issue, m->fills, uint8_t(wg), 1, m->copy_set,
                    uint8_t(reread)};
    }
}

void check_wgmma_commit() { as.committed[cur->linear]++; }

// ---- a wgmma's accumulators (kc_async.cpp: wgmma_mma; kc_check_access.cpp: on_access) -------------
// wgmma.mma_async writes its accumulator registers asynchronously: from its issue until a
// wgmma.wait_group of the issuing thread retires its group, the thread may not read or write
// them (PTX ISA, wgmma.mma_async: "Accessing the accumulator register or the input registers
// containing fragments of matrix A ... before the wgmma.wait_group ... is undefined"); a later
// wgmma of the same shape may take them (the chain of a K loop), which the translation does
// without a C++ access (ptx.edits binds "+f" operands by reference). A thread's accumulators are
// the source's own variables, on its stack: on_access hands such an access here while any are
// pending. Each thread keeps its last ACC_WGMMAS wgmmas' addresses (an older one's, forgotten,
// goes unchecked); a later wgmma on the same variables takes over their record.

static void acc_drop(unsigned t, unsigned i) {
    acc[t][i] = acc[t][--nacc[t]];
    accumulators_pending--;
}

// Thread t's records whose group its own wait_group has retired are done.
static void acc_retire(unsigned t) {
    for (unsigned i = nacc[t]; i-- > 0;)
        if (acc[t][i].group < as.retired_by[t]) acc_drop(t, i);
}

void check_wgmma_accumulators(float* const* d, uint32_t count, int line) {
    unsigned t = cur->linear;
    if (!acc[t] && !(acc[t] = static_cast<AccRecord*>(calloc(ACC_WGMMAS, sizeof(AccRecord))))) return;
    acc_retire(t);
    AccRecord r{as.committed[t], uint32_t(line), cur->asm_pc ? pc_of(cur->asm_pc) : 0, count, ~uintptr_t(0), 0, {}};
    for (uint32_t i = 0; i < count && i < ACC_MAX; ++i) {
        r.at[i] = reinterpret_cast<uintptr_t>(d[i]);
        r.lo = r.at[i] < r.lo ? r.at[i] : r.lo;
        r.hi = r.at[i] + sizeof(float) > r.hi ? r.at[i] + sizeof(float) : r.hi;
    }
    unsigned i = 0;
    while (i < nacc[t] && !(acc[t][i].count == r.count && acc[t][i].lo == r.lo && acc[t][i].hi == r.hi &&
                            !memcmp(acc[t][i].at, r.at, sizeof(uintptr_t) * (count < ACC_MAX ? count : ACC_MAX))))
        ++i;
    if (i == nacc[t]) {   // new variables: a record of their own (the oldest gives way)
        if (nacc[t] == ACC_WGMMAS) acc_drop(t, 0);
        i = nacc[t]++;
        accumulators_pending++;
    }
    acc[t][i] = r;
}

void check_accumulator_access(uintptr_t a, unsigned size, uint32_t pc, Op op) {
    unsigned t = cur->linear;
    acc_retire(t);
    for (unsigned i = 0; i < nacc[t]; ++i) {
        const AccRecord& r = acc[t][i];
        if (a + size <= r.lo || a >= r.hi) continue;
        for (uint32_t k = 0; k < r.count && k < ACC_MAX; ++k) {
            if (a + size <= r.at[k] || a >= r.at[k] + sizeof(float)) continue;
            char buf[512];
            finding(buf, sizeof buf, Finding::wgmma_accumulator,
                    "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":0,\"op\":\"%s\",\"register\":%u,"
                    "\"wgmma_line\":%u,\"wgmma_pc\":%u,\"group\":%u,\"retired\":%u,\"committed\":%u}",
                    my_status->block, t, pc, op == READ ? "read" : "write", k, r.line, r.pc, r.group,
                    as.retired_by[t], as.committed[t]);
            report(buf);
        }
    }
}

// wait_group n: all but the newest n groups this thread committed are complete. The warpgroup's
// threads execute it together (.sync.aligned): the first to get there retires for all.
// Whether wait_group n finds groups of this thread's warpgroup still in flight. The wait then
// yields once before it retires them (kc_async.cpp): the runtime multiplies at the wgmma, so
// without it no other thread would ever run while a group reads its tiles, and a slot handed
// back before the wait (its producer then refilling it while the wgmma may still read it, as
// on a GPU) would go unseen.
bool wgmma_in_flight(uint32_t n) {
    uint32_t c = as.committed[cur->linear], wg = cur->linear / 128;
    return c > n && wg < MAX_WARPGROUPS && c - n > as.retired[wg];
}

void check_wgmma_wait(uint32_t n) {
    uint32_t c = as.committed[cur->linear], wg = cur->linear / 128;
    if (c <= n) return;
    if (c - n > as.retired_by[cur->linear]) as.retired_by[cur->linear] = c - n;
    if (wg < MAX_WARPGROUPS && c - n > as.retired[wg]) as.retired[wg] = c - n;
}

// ---- TMA stores (kc_async.cpp: tma_store_2d, bulk_commit, bulk_wait) -------------------------------
// One element of a TMA store's source box, at window offset off: read by the async proxy until
// the issuing thread's bulk group, the one it has not yet committed, is waited for.
void check_tma_store_read(uint64_t off, uint32_t size, int line) {
    uint32_t pc = cur && cur->asm_pc ? pc_of(cur->asm_pc) : 0;
    check_proxy_read(off, size, "store", cur->linear, 1, -1, line, pc);
    for (uint64_t a = off; a < off + size; ++a) {
        Mark* m = mark(a);
        if (!m) continue;
        m->st = {uint32_t(line), pc, as.bulk_committed[cur->linear], uint16_t(cur->linear), 1};
    }
}

void check_bulk_commit() { as.bulk_committed[cur->linear]++; }

// Whether cp.async.bulk.wait_group[.read] n finds groups of this thread still reading.
bool bulk_in_flight(uint32_t n) {
    uint32_t c = as.bulk_committed[cur->linear];
    return c > n && c - n > as.bulk_retired[cur->linear];
}

void check_bulk_wait(uint32_t n) {
    uint32_t c = as.bulk_committed[cur->linear];
    if (c > n && c - n > as.bulk_retired[cur->linear]) as.bulk_retired[cur->linear] = c - n;
}

}  // namespace kc
