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
    check_async_init(bar);
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
    check_async_acquire(bar);
#endif
    return true;
}

// ---- named barriers ----------------------------------------------------------------------------
// bar.sync id, count: the barrier completes when `count` threads have arrived (a GPU counts whole
// warps: the kernel's threads arrive as warps do when every lane of theirs calls it). Waiting
// threads stay RUNNABLE, as at an mbarrier, so the others of the block run on. Barrier 0 with
// every thread of the block is __syncthreads(). Checked mode: it orders what its threads did
// before it before what they do after, in shared and in global memory, as an mbarrier of
// theirs would (kc_check_races.cpp, kc_check_global_races.cpp).
#ifdef KC_CHECKED
static const char named_clock[16] = {};   // each named barrier's clocks, as an mbarrier's at this address
#endif

// This thread's arrival at barrier id (counted, with its release in checked mode); the generation
// it arrived in.
static uint32_t named_arrive(uint32_t id, uint32_t count, const char* what, int line) {
    if (id >= 16) operand_error("barrier_id", what, nullptr, id, 16, line);
    if (count == 0) count = sched.nthreads;
    if (count % 32 || count > sched.nthreads)
        operand_error("barrier_count", what, nullptr, count, sched.nthreads, line);
    uint32_t generation = sched.named_generation[id];
    sched.progress++;
#ifdef KC_CHECKED
    check_mbarrier_arrive(&named_clock[id]);
#endif
    if (++sched.named_arrived[id] == count) {
        sched.named_arrived[id] = 0;
        sched.named_generation[id]++;
#ifdef KC_CHECKED
        check_mbarrier_complete(&named_clock[id]);
#endif
    }
    return generation;
}

void named_barrier(uint32_t id, uint32_t count, int line) {
    KC_ASM_CALL;
    if (id == 0 && (count == 0 || count == sched.nthreads)) return syncthreads(line, BARRIER, 0);
    uint32_t generation = named_arrive(id, count, "bar.sync", line);
    while (sched.named_generation[id] == generation) yield_to_scheduler();
#ifdef KC_CHECKED
    check_mbarrier_acquire(&named_clock[id]);
#endif
}

// bar.arrive id, count: the arrival alone. The thread goes on at once and acquires nothing: what
// it did before is ordered before what the threads that wait at the barrier (bar.sync) do after.
// (Barrier 0 with the whole block is __syncthreads()'s, which meets in the scheduler: the
// translation refuses bar.arrive 0; an id that is 0 only at run time arrives here, where such a
// __syncthreads() does not see it.)
void named_barrier_arrive(uint32_t id, uint32_t count, int line) {
    KC_ASM_CALL;
    named_arrive(id, count, "bar.arrive", line);
}

// ---- a wait that nothing can complete ---------------------------------------------------------
// The block's threads only wait (kc_poll.cpp: stalled_pass), thread t at an mbarrier: the
// barrier's state and where every thread of the block is, as JSON (kc_findings.def).
[[noreturn]] void mbarrier_stall(uint32_t block, const Thread& t) {
    MBarrier b = unpack(*static_cast<const uint64_t*>(t.mbarrier));
    const TxTotals& tt = totals_of(t.mbarrier);
    char* buf = my_status->message;
    size_t n = sizeof my_status->message;
    int k = finding(buf, n, Finding::mbarrier_stall,
                    "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"address\":%llu,\"parity\":%u,\"pending\":%u,"
                    "\"expected\":%u,\"tx\":%d,\"tx_expected\":%u,\"tx_delivered\":%u,\"states\":\"",
                    block, t.linear, pc_offset(t.asm_pc), t.mbarrier_line, (unsigned long long)shared_offset(t.mbarrier),
                    b.phase, b.pending, b.expected, b.tx, tt.expected, tt.delivered);
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 64; ++i) {
        const Thread& u = sched.threads[i];
        buf[k++] = u.state == AT_SYNCTHREADS ? 'S' : u.state == AT_WARP ? 'W' : u.state == EXITED ? 'E'
                   : u.mbarrier_line ? 'M' : 'R';
    }
    k += snprintf(buf + k, n - k, "\",\"lines\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 16; ++i) {
        const Thread& u = sched.threads[i];
        int at = u.state == EXITED ? u.exit_line : u.state == RUNNABLE ? u.mbarrier_line : u.line;
        k += snprintf(buf + k, n - k, i ? ",%d" : "%d", at);
    }
    // where each thread waiting at an mbarrier called the wait from (its helpers' calls)
    k += snprintf(buf + k, n - k, "],\"pcs\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(n) - 16; ++i) {
        const Thread& u = sched.threads[i];
        uint32_t pc = u.state == RUNNABLE && u.mbarrier_line ? pc_offset(u.asm_pc) : 0u;
        k += snprintf(buf + k, n - k, i ? ",%u" : "%u", pc);
    }
    snprintf(buf + k, n - k, "]}");
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

}  // namespace kc
