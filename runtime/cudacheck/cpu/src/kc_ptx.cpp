// What translated inline PTX needs of the runtime (kc_ptx.h): the shared window, and the
// mbarrier object, whose waits yield to the block scheduler (kc_scheduler.cpp) so that the
// threads they wait for run, and whose wait that nothing can complete is reported.
#include "kc_runtime.h"

// The static __shared__ section of the kernel's library (kc_device.ld); absent where the kernel
// has no static shared variable.
extern "C" char __start_kc_shared[] __attribute__((weak));
extern "C" char __stop_kc_shared[] __attribute__((weak));

namespace kc {

// ---- the shared window --------------------------------------------------------------------
// Shared memory is two regions of the kernel's library here: the static section (its guard
// included, kc_device.ld) and the dynamic buffer (kc_memory.cpp), wherever the loader put them.
// Offsets lay them out as a GPU lays out a block's shared memory: the static variables from 0,
// the dynamic buffer after them (here at the next 1,024-byte boundary). So the window is as
// small as the memory the kernel uses, and its addresses fit the 18 bits of a wgmma
// descriptor's start address (a block near the 227 KB limit stays under 256 KB); offset
// arithmetic inside a region (the next barrier of an array: + 8) maps back as the pointer's would.
static uintptr_t static_lo() { return reinterpret_cast<uintptr_t>(__start_kc_shared); }
static uint64_t static_span() { return __start_kc_shared ? uint64_t(__stop_kc_shared - __start_kc_shared) : 0; }
static uint64_t dynamic_at() { return (static_span() + 1023) & ~uint64_t(1023); }

uint64_t shared_offset(const void* p) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p), s = static_lo();
    if (s && a >= s && a - s <= static_span()) return a - s;    // the section's end included
    return dynamic_at() + (a - reinterpret_cast<uintptr_t>(dynamic_smem));
}

void* shared_address(uint64_t offset) {
    if (offset < dynamic_at()) return reinterpret_cast<void*>(static_lo() + offset);
    return dynamic_smem + (offset - dynamic_at());
}

bool in_shared(const void* p, size_t size) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p), s = reinterpret_cast<uintptr_t>(__start_kc_shared);
    uintptr_t d = reinterpret_cast<uintptr_t>(dynamic_smem);
    return (s && a >= s && a + size <= reinterpret_cast<uintptr_t>(__stop_kc_shared)) ||
           (a >= d && a + size <= d + DYNAMIC_SHARED_CAPACITY);
}

// ---- the mbarrier object ----------------------------------------------------------------------
// Its state, packed into the barrier's 8 bytes (the kernel never reads them):
//   bits  0-19  pending arrivals of the current phase
//   bits 20-39  arrivals each phase expects (mbarrier.init's count)
//   bits 40-61  tx-count, two's complement: bytes of transactions the phase still waits for
//               (below zero when bytes complete before they are expected, as PTX allows)
//   bit  63     the current phase's parity
constexpr uint32_t MAX_COUNT = (1u << 20) - 1;   // PTX's bound on counts and on |tx-count|
struct MBarrier {
    uint32_t pending, expected;
    int32_t tx;
    uint32_t phase;
};

static MBarrier unpack(uint64_t w) {
    int32_t tx = int32_t((w >> 40) & 0x3fffff);
    return {uint32_t(w & 0xfffff), uint32_t((w >> 20) & 0xfffff), tx >= (1 << 21) ? tx - (1 << 22) : tx,
            uint32_t(w >> 63)};
}

static uint64_t pack(const MBarrier& b) {
    return uint64_t(b.pending) | uint64_t(b.expected) << 20 | (uint64_t(uint32_t(b.tx)) & 0x3fffff) << 40 |
           uint64_t(b.phase) << 63;
}

static uint64_t* barrier(void* bar, const char* what, int line) {
    if (reinterpret_cast<uintptr_t>(bar) % 8 || !in_shared(bar, 8))
        operand_error("mbarrier_address", what, bar, reinterpret_cast<uintptr_t>(bar) % 8, 8, line);
    return static_cast<uint64_t*>(bar);
}

// The bytes each barrier's current phase was told to expect (expect_tx) and those completed,
// beside its packed state: for the report of a phase they do not balance (a copy's box larger
// or smaller than the bytes expected), which the net tx-count alone cannot tell.
struct TxTotals {
    const void* bar;
    uint32_t expected, delivered;
};
static TxTotals totals[64];

static TxTotals& totals_of(const void* bar) {
    for (TxTotals& t : totals)
        if (t.bar == bar) return t;
    for (TxTotals& t : totals)
        if (!t.bar) return t = {bar, 0, 0};
    return totals[0] = {bar, 0, 0};   // past 64 barriers: the first is reused
}

// The phase completes when nothing is pending: the next one begins, expecting as many arrivals.
static void complete_if_done(MBarrier& b, void* bar) {
    if (b.pending || b.tx) return;
#ifdef KC_CHECKED
    check_mbarrier_complete(bar);
    check_async_phase_complete(bar);
#endif
    totals_of(bar) = {bar, 0, 0};
    b.phase ^= 1u;
    b.pending = b.expected;
}

#ifdef KC_CHECKED
// Checked mode: a phase all of whose arrivals have come with more bytes completed than expected
// can never complete (only a bare expect_tx could still balance it): reported at once, with the
// line of the arrival or copy that made it so, rather than as a stall later.
static void check_tx_balance(const MBarrier& b, void* bar, int line) {
    if (b.pending || b.tx >= 0) return;
    const TxTotals& t = totals_of(bar);
    char* buf = my_status->message;
    finding(buf, sizeof my_status->message, Finding::tx_overflow,
            "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"address\":%llu,\"parity\":%u,\"expected\":%u,"
            "\"delivered\":%u}",
            my_status->block, cur->linear, asm_pc(), line, (unsigned long long)shared_offset(bar), b.phase,
            t.expected, t.delivered);
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}
#endif

void mbarrier_init(void* bar, uint32_t count, int line) {
    KC_ASM_CALL;
    uint64_t* w = barrier(bar, "mbarrier.init", line);
    if (count == 0 || count > MAX_COUNT) operand_error("mbarrier_count", "mbarrier.init", bar, count, MAX_COUNT, line);
    *w = pack({count, count, 0, 0});
    totals_of(bar) = {bar, 0, 0};
#ifdef KC_CHECKED
    check_mbarrier_init(bar);
    check_async_init(bar, count, line);
#endif
}

static void add_tx(void* bar, int64_t tx, const char* what, int line) {
    uint64_t* w = barrier(bar, what, line);
    MBarrier b = unpack(*w);
    int64_t now = int64_t(b.tx) + tx;
    if (now > int64_t(MAX_COUNT) || now < -int64_t(MAX_COUNT))
        operand_error("mbarrier_tx", what, bar, uint64_t(tx < 0 ? -tx : tx), uint64_t(b.tx), line);
    b.tx = int32_t(now);
    TxTotals& t = totals_of(bar);
    (tx > 0 ? t.expected : t.delivered) += uint32_t(tx > 0 ? tx : -tx);
#ifdef KC_CHECKED
    if (tx > 0) check_async_expect_tx(bar, line);
    check_tx_balance(b, bar, line);
#endif
    complete_if_done(b, bar);
    *w = pack(b);
    sched.progress++;
}

void mbarrier_expect_tx(void* bar, uint32_t tx, int line) {
    KC_ASM_CALL;
    add_tx(bar, tx, "mbarrier.expect_tx", line);
}

void mbarrier_complete_tx(void* bar, uint32_t tx, int line) {
    KC_ASM_CALL;
    add_tx(bar, -int64_t(tx), "mbarrier.complete_tx", line);
}

// `count` arrivals; `local`: of the running thread (checked mode orders its accesses before the
// phase's completion), else of another block's thread (kc_cluster.cpp), which orders nothing here.
static uint64_t arrive(void* bar, uint32_t count, const char* what, bool local, int line) {
    uint64_t* w = barrier(bar, what, line);
    MBarrier b = unpack(*w);
    if (count == 0 || count > b.pending) operand_error("mbarrier_arrivals", what, bar, count, b.pending, line);
#ifdef KC_CHECKED
    if (local) check_mbarrier_arrive(bar);
#else
    (void)local;
#endif
    uint64_t state = b.phase;
    b.pending -= count;
#ifdef KC_CHECKED
    check_tx_balance(b, bar, line);
#endif
    complete_if_done(b, bar);
    *w = pack(b);
    sched.progress++;   // a waiter may get further
    return state;
}

uint64_t mbarrier_arrive(void* bar, uint32_t count, uint32_t tx, int line) {
    KC_ASM_CALL;
    const char* what = tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive";
    if (tx) add_tx(bar, tx, what, line);
    return arrive(bar, count, what, true, line);
}

void mbarrier_arrive_remote(void* bar, int line) { arrive(bar, 1, "mbarrier.arrive.shared::cluster", false, line); }

bool mbarrier_wait(void* bar, uint32_t parity, int line) {
    KC_ASM_CALL;
    uint64_t* w = barrier(bar, "mbarrier.try_wait", line);
    if (unpack(*w).phase == parity) {   // the phase of this parity is the current one, not complete
        // Still RUNNABLE: the next pass of the scheduler runs it again. While it is switched
        // out, a report of a block that cannot finish (mbarrier_stall) finds where it waits.
        cur->mbarrier = bar;
        cur->mbarrier_line = line;
        yield_to_scheduler();
        cur->mbarrier_line = 0;
        if (unpack(*w).phase == parity) return false;
    }
#ifdef KC_CHECKED
    check_mbarrier_acquire(bar);
    check_async_acquire(bar, parity, line);
#endif
    return true;
}

// ---- named barriers ----------------------------------------------------------------------------
// bar.sync id, count: the barrier completes when `count` threads have arrived (a GPU counts whole
// warps: the kernel's threads arrive as warps do when every lane of theirs calls it). Waiting
// threads stay RUNNABLE, as at an mbarrier, so the others of the block run on. Barrier 0 for
// every thread of the block waits where __syncthreads() does, in the scheduler (barrier_form
// tells a count of them all from none). Checked mode: it orders what its threads did
// before it before what they do after, in shared and in global memory, as an mbarrier of
// theirs would (kc_check_races.cpp, kc_check_global_races.cpp).
#ifdef KC_CHECKED
static const char named_clock[16] = {};   // each named barrier's clocks, as an mbarrier's at this address
#endif

// Every arrival in one use of a barrier gives the same thread count, or none: a GPU stops the
// kernel with an illegal instruction when a warp arrives with another (measured on an H200:
// bar.arrive 0, 128 beside __syncthreads() in a block of 128 threads, bar.sync 0 beside
// bar.sync 0, 128, bar.arrive 1, 64 beside bar.sync 1, 128). The first arrival of a use sets
// it; the use ends when the barrier completes.
void barrier_form(uint32_t id, uint32_t count, const char* what, int line) {
    uint32_t& form = sched.barrier_form[id];
    if (form && form != count + 1) operand_error("barrier_mix", what, reinterpret_cast<const void*>(uintptr_t(id)),
                                                 count, form - 1, line);
    form = count + 1;
}

// Barrier id completes: its waiting threads go on, and its next use may take another count.
static void complete_named(uint32_t id) {
    sched.named_arrived[id] = 0;
    sched.named_generation[id]++;
    sched.barrier_form[id] = 0;
#ifdef KC_CHECKED
    check_mbarrier_complete(&named_clock[id]);
#endif
}

// This thread's arrival at barrier id (counted, with its release in checked mode); the generation
// it arrived in. Without a count, the barrier is for every thread of the block that has not
// exited; with one, exited threads do not lower it (on an H200, bar.sync 1 completes when half
// the block has returned, bar.sync 1, 128 hangs).
static uint32_t named_arrive(uint32_t id, uint32_t count, const char* what, int line) {
    if (id >= 16) operand_error("barrier_id", what, nullptr, id, 16, line);
    barrier_form(id, count, what, line);
    if (id) sched.named_used = true;
    if (count && (count % 32 || count > sched.nthreads))
        operand_error("barrier_count", what, nullptr, count, sched.nthreads, line);
    uint32_t generation = sched.named_generation[id];
    sched.named_count[id] = count ? count : sched.nthreads - sched.exited;
    sched.progress++;
#ifdef KC_CHECKED
    check_mbarrier_arrive(&named_clock[id]);
#endif
    if (++sched.named_arrived[id] == sched.named_count[id]) complete_named(id);
    return generation;
}

// A thread of the block has exited: a use of a barrier without a count that waits only for it
// completes.
void named_barriers_thread_exit() {
    if (!sched.named_used) return;   // (most blocks: at each thread's exit)
    for (uint32_t id = 1; id < 16; ++id)
        if (sched.barrier_form[id] == 1 && sched.named_arrived[id] == sched.nthreads - sched.exited)
            complete_named(id);
}

void named_barrier(uint32_t id, uint32_t count, int line) {
    KC_ASM_CALL;
    if (id == 0 && (count == 0 || count == sched.nthreads)) {   // it waits as at __syncthreads(), named as itself
        barrier_form(0, count, "bar.sync", line);
        return syncthreads(line, count ? BARRIER_COUNTED : BARRIER, 0);
    }
    uint32_t generation = named_arrive(id, count, "bar.sync", line);
    cur->named_wait = uint8_t(id + 1);   // for a report of a block that cannot finish (named_barrier_stall)
    cur->line = line;
    while (sched.named_generation[id] == generation) yield_to_scheduler();
    cur->named_wait = 0;
#ifdef KC_CHECKED
    check_mbarrier_acquire(&named_clock[id]);
#endif
}

// bar.arrive id, count: the arrival alone. The thread goes on at once and acquires nothing: what
// it did before is ordered before what the threads that wait at the barrier (bar.sync) do after.
// An arrival at barrier 0 for the whole block meets those waiting with bar.sync 0 for the whole
// block, which wait in the scheduler as at __syncthreads(): the thread is marked with the
// generation it arrived in, for release_barrier_zero below.
void named_barrier_arrive(uint32_t id, uint32_t count, int line) {
    KC_ASM_CALL;
    uint32_t generation = named_arrive(id, count, "bar.arrive", line);
    if (id == 0 && count == sched.nthreads) cur->zero_arrival = generation + 1;
}

// Barrier 0 is __syncthreads()'s, and a GPU counts every arrival there, whichever instruction
// made it: threads that arrived with bar.arrive 0, n and went on, and threads that wait with
// bar.sync 0, n (n the whole block's threads; __syncthreads() gives no count, so it cannot meet
// an arrival: barrier_form), complete it together once they are the whole block. The scheduler
// calls this between passes, before it looks for threads that still run: the arrivals' threads
// may be spinning on what the waiting threads do next. It releases the waiting threads and
// returns true once the block is there. Checked mode orders what every thread did before its
// arrival before what the waiting threads do after, as bar.sync does; it opens no new barrier
// interval, since the threads that only arrived went on without waiting.
bool release_barrier_zero() {
    if (!sched.named_arrived[0]) return false;
    uint32_t mark = sched.named_generation[0] + 1;
    unsigned waiting = 0;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state == AT_SYNCTHREADS && t.op == BARRIER_COUNTED) ++waiting;
        else if (t.zero_arrival != mark) return false;   // (one that exited without arriving: a GPU hangs)
    }
    if (!waiting) return false;
    Thread* running = cur;
    for (int pass = 0; pass < 2; ++pass) {   // every waiting thread's arrival; the completion; each one's acquire
        if (pass) complete_named(0);
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            Thread& t = sched.threads[i];
            if (t.state != AT_SYNCTHREADS) continue;
#ifdef KC_CHECKED
            cur = &t;
            my_status->thread = i;
            if (pass) check_mbarrier_acquire(&named_clock[0]);
            else check_mbarrier_arrive(&named_clock[0]);
#endif
            if (pass) t.result = 0, t.state = RUNNABLE, sched.at_sync--;
        }
    }
    cur = running;
    my_status->thread = running->linear;
    sched.progress++;
    return true;
}

// ---- a wait that nothing can complete ---------------------------------------------------------
// The block's threads only wait (kc_poll.cpp: stalled_pass), thread t at an mbarrier or a named
// barrier: the barrier's state and where every thread of the block is, as JSON (kc_findings.def).

// Where each thread of the block is, after a finding's own fields: its state (M: it waits at an
// mbarrier, N: at a named barrier, C: at the cluster barrier, S: at __syncthreads(), W: at a warp
// operation, E: it exited, R: it polls memory), its line, the named barrier it waits at (-1:
// none), and where it called a wait at a barrier from (its helpers' calls); then the report ends
// the worker.
[[noreturn]] static void report_waits(char* buf, size_t n, int k) {
    k += snprintf(buf + k, n - k, "\"states\":\"");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 64; ++i) {
        const Thread& u = sched.threads[i];
        buf[k++] = u.state == AT_SYNCTHREADS ? (u.op == BARRIER_COUNTED ? 'N' : 'S') : u.state == AT_WARP ? 'W'
                   : u.state == EXITED ? 'E' : u.mbarrier_line ? 'M' : u.named_wait ? 'N' : u.cluster_wait ? 'C' : 'R';
    }
    k += snprintf(buf + k, n - k, "\",\"lines\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 16; ++i) {
        const Thread& u = sched.threads[i];
        int at = u.state == EXITED ? u.exit_line : u.state != RUNNABLE ? u.line
                 : u.mbarrier_line ? u.mbarrier_line : u.named_wait || u.cluster_wait ? u.line : 0;
        k += snprintf(buf + k, n - k, i ? ",%d" : "%d", at);
    }
    k += snprintf(buf + k, n - k, "],\"ids\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 16; ++i) {
        const Thread& u = sched.threads[i];
        int id = u.state == RUNNABLE ? int(u.named_wait) - 1 : u.state == AT_SYNCTHREADS && u.op == BARRIER_COUNTED ? 0 : -1;
        k += snprintf(buf + k, n - k, i ? ",%d" : "%d", id);
    }
    k += snprintf(buf + k, n - k, "],\"pcs\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 16; ++i) {
        const Thread& u = sched.threads[i];
        uint32_t pc = u.state == RUNNABLE && (u.mbarrier_line || u.named_wait || u.cluster_wait) ? pc_offset(u.asm_pc)
                                                                                                : 0u;
        k += snprintf(buf + k, n - k, i ? ",%u" : "%u", pc);
    }
    snprintf(buf + k, n - k, "]}");
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

// Checked mode reports the waiter whose barrier best names the mistake, not the first the scheduler
// found (often a producer waiting for a slot, downstream of the cause): a phase with every arrival in
// and bytes missing (expect_tx too large), then a waiter that asks for a phase past one it never
// observed complete (`skipped`: its parity or its count of phases off), then a phase with some of its
// arrivals (the count too large). `fresh`: every waiter waits on a barrier that has neither completed
// a phase nor had an arrival, two barriers or more: each waits for what only another waiter would start.
[[noreturn]] void mbarrier_stall(uint32_t block, const Thread& first) {
    const Thread* pick = &first;
    uint32_t skipped = 0, fresh = 0;
#ifdef KC_CHECKED
    int best = 0;
    const void* seen_bar = nullptr;
    bool all_fresh = true, several = false;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& u = sched.threads[i];
        if (u.state != RUNNABLE || !u.mbarrier_line) continue;
        MBarrier ub = unpack(*static_cast<const uint64_t*>(u.mbarrier));
        uint32_t behind = check_async_unobserved(u.mbarrier, u.linear), arrived = ub.expected - ub.pending;
        int score = !ub.pending && ub.tx > 0 ? 3 : behind && !arrived ? 2 : arrived && ub.tx <= 0 ? 1 : 0;
        if (score > best) {
            best = score;
            pick = &u;
            skipped = score == 2 ? behind : 0;
        }
        all_fresh = all_fresh && !arrived && !ub.tx && !check_async_phases(u.mbarrier);
        several = several || (seen_bar && seen_bar != u.mbarrier);
        seen_bar = u.mbarrier;
    }
    fresh = all_fresh && several;
#endif
    const Thread& t = *pick;
    MBarrier b = unpack(*static_cast<const uint64_t*>(t.mbarrier));
    const TxTotals& tt = totals_of(t.mbarrier);
    char* buf = my_status->message;
    size_t n = sizeof my_status->message;
    int k = finding(buf, n, Finding::mbarrier_stall,
                    "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"address\":%llu,\"parity\":%u,\"pending\":%u,"
                    "\"expected\":%u,\"tx\":%d,\"tx_expected\":%u,\"tx_delivered\":%u,\"skipped\":%u,\"fresh\":%u,",
                    block, t.linear, pc_offset(t.asm_pc), t.mbarrier_line, (unsigned long long)shared_offset(t.mbarrier),
                    b.phase, b.pending, b.expected, b.tx, tt.expected, tt.delivered, skipped, fresh);
#ifdef KC_CHECKED
    k += snprintf(buf + k, n - k, "\"barrier\":\"%s\",", barrier_name(t.mbarrier));
#endif
    report_waits(buf, n, k);
}

[[noreturn]] void cluster_stall(uint32_t block, const Thread& t) {
    uint32_t arrived, exited, threads;
    cluster_barrier_state(arrived, exited, threads);
    char* buf = my_status->message;
    size_t n = sizeof my_status->message;
    int k = finding(buf, n, Finding::cluster_stall,
                    "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"arrived\":%u,\"exited\":%u,\"threads\":%u,",
                    block, t.linear, pc_offset(t.asm_pc), t.line, arrived, exited, threads);
    report_waits(buf, n, k);
}

// Threads wait at barrier id (thread t among them) for `count` arrivals of which `arrived` came.
[[noreturn]] static void report_barrier_stall(uint32_t block, const Thread& t, unsigned id, unsigned count,
                                              unsigned arrived) {
    char* buf = my_status->message;
    size_t n = sizeof my_status->message;
    int k = finding(buf, n, Finding::barrier_stall,
                    "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"barrier\":%u,\"count\":%u,\"arrived\":%u,",
                    block, t.linear, pc_offset(t.asm_pc), t.line, id, count, arrived);
    report_waits(buf, n, k);
}

// The scheduler found every thread of the block that has not exited waiting where __syncthreads()
// waits: if they wait with bar.sync 0, n for the whole block, the threads that exited are
// missing from it, and a GPU hangs there.
void barrier_zero_stall(uint32_t block) {
    if (!sched.exited) return;
    unsigned waiting = 0;
    const Thread* first = nullptr;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS) continue;
        waiting++;
        if (!first && t.op == BARRIER_COUNTED) first = &t;
    }
    if (first) report_barrier_stall(block, *first, 0, sched.nthreads, waiting + sched.named_arrived[0]);
}

[[noreturn]] void named_barrier_stall(uint32_t block, const Thread& t) {
    unsigned id = t.named_wait - 1u;
    report_barrier_stall(block, t, id, sched.named_count[id], sched.named_arrived[id]);
}

}  // namespace kc
