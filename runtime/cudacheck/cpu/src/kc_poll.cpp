// Threads that wait for memory to change: poll(), which every atomic (kc_memory.cpp) and every
// volatile read (checked mode's kc_check_access.cpp, a plain build's kc_poll.h) calls, and the
// watchdog of a block whose threads only poll (ForwardProgressError).
#include <dlfcn.h>
#include <time.h>

#include "kc_runtime.h"

namespace kc {

// A thread polling a location (a flag or a lock another thread sets) never reaches a barrier,
// so the scheduler's protocol (kc_scheduler.cpp) would run it forever. Every atomic and every
// volatile read comes through poll(): after SPIN_POLLS reads in a row of one location, with
// the same operands (a loop of atomicMax(&m, x[i]) passes new ones) and nothing else between
// them that checked mode sees, that find it unchanged, the thread yields, staying RUNNABLE,
// and the pass goes on to the block's other threads (one of them may be the one to set it, as
// on a GPU since Volta); it yields again after as many more.
// A pass in which no thread got further (no barrier, exit or changed value) leaves the block
// stalled: it waits for another worker's block. When every worker is stalled or done for
// STALL_MS, nothing can change the location any more: the block waits for a block that cannot
// run beside it, and the worker reports where it polls (ForwardProgressError).
constexpr uint32_t SPIN_POLLS = 256;
constexpr uint64_t STALL_MS = 300;

static uint64_t value_at(const volatile void* p, unsigned size) {
    switch (size) {
    case 1: return *static_cast<const volatile uint8_t*>(p);
    case 2: return *static_cast<const volatile uint16_t*>(p);
    case 4: return *static_cast<const volatile uint32_t*>(p);
    default: return *static_cast<const volatile uint64_t*>(p);
    }
}

void poll(const volatile void* p, unsigned size, const void* pc, uint64_t key) {
    if (!cur || !my_status) return;
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uint64_t v = value_at(p, size);
    if (a != cur->poll_addr || v != cur->poll_value || key != cur->poll_key) {
        if (a == cur->poll_addr && cur->poll_pc) sched.progress++;   // what it waited for came
        cur->poll_addr = a;
        cur->poll_value = v;
        cur->poll_key = key;
        cur->polls = 0;
        cur->poll_pc = nullptr;
        return;
    }
    if (++cur->polls < SPIN_POLLS) return;
    cur->polls = 0;
    cur->poll_pc = pc;
    yield_to_scheduler();   // still RUNNABLE: the next pass runs it again
}

// An instruction's offset in the kernel's library, which checked mode's line table maps to a line.
uint32_t pc_offset(const void* pc) {
    Dl_info info;
    if (!pc || !dladdr(pc, &info)) return 0;
    return uint32_t(reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1);
}

static uint64_t now_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return uint64_t(t.tv_sec) * 1000 + uint64_t(t.tv_nsec) / 1000000;
}

[[noreturn]] static void report_stall(uint32_t block, uint64_t nblocks) {
    for (unsigned i = 0; i < sched.nthreads; ++i) {   // one waits at an mbarrier: its own report (kc_ptx.cpp)
        const Thread& u = sched.threads[i];
        if (u.state == RUNNABLE && u.mbarrier_line) mbarrier_stall(block, u);
    }
    for (unsigned i = 0; i < sched.nthreads; ++i) {   // or at a named barrier, or the cluster's (kc_ptx.cpp)
        const Thread& u = sched.threads[i];
        if (u.state == RUNNABLE && u.named_wait) named_barrier_stall(block, u);
    }
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& u = sched.threads[i];
        if (u.state == RUNNABLE && u.cluster_wait) cluster_stall(block, u);
    }
    const Thread* t = nullptr;
    for (unsigned i = 0; i < sched.nthreads && !t; ++i)
        if (sched.threads[i].state == RUNNABLE) t = &sched.threads[i];
    uint64_t done = 0;
    for (unsigned w = 0; w < launch->workers; ++w) done += launch->status[w].blocks_done;
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::stall,
             "\"block\":%u,\"thread\":%u,\"address\":%llu,\"value\":%llu,\"pc\":%u,"
             "\"blocks_done\":%llu,\"blocks\":%llu,\"workers\":%u}",
             block, t ? t->linear : 0, (unsigned long long)(t ? t->poll_addr : 0),
             (unsigned long long)(t ? t->poll_value : 0), t ? pc_offset(t->poll_pc) : 0,
             (unsigned long long)done, (unsigned long long)nblocks, launch->workers);
    fflush(stdout);
    _exit(5);
}

// A pass with spinning threads in which nothing got further: wait a little for the other
// workers, and report when none of them can make progress either.
void stalled_pass(uint32_t block, uint64_t& since, uint64_t& seen) {
    my_status->stalled = 1;
    timespec pause{0, 1000000};
    nanosleep(&pause, nullptr);
    uint64_t sum = 0;
    bool live = false;
    for (unsigned w = 0; w < launch->workers; ++w) {
        const WorkerStatus& o = launch->status[w];
        sum += __atomic_load_n(&o.progress, __ATOMIC_RELAXED);
        live |= &o != my_status && __atomic_load_n(&o.code, __ATOMIC_RELAXED) == RUNNING &&
                !__atomic_load_n(&o.stalled, __ATOMIC_RELAXED);
    }
    if (live || sum != seen) {
        seen = sum;
        since = 0;
        return;
    }
    if (!since) since = now_ms();
    else if (now_ms() - since > STALL_MS)
        report_stall(block, uint64_t(grid_dim.x) * grid_dim.y * grid_dim.z);
}

}  // namespace kc

#ifdef KC_POLL
#include "kc_poll.h"
#endif
