// The block scheduler: runs the threads of one block as fibers, in a fixed order.
//
// Protocol. Every thread starts RUNNABLE. A pass walks the threads in schedule order
// and switches into each RUNNABLE one; it runs until it reaches a barrier (state
// AT_SYNCTHREADS or AT_SYNCWARP) or returns (EXITED), then switches back here. When a
// pass leaves no thread RUNNABLE, the barriers are resolved:
//   1. a warp whose live threads (those in the waiting masks that have not exited) all
//      wait at __syncwarp is released;
//   2. otherwise, if every live thread of the block waits at __syncthreads, all are
//      released: the next barrier interval begins;
//   3. otherwise, if every thread has exited, the block is done;
//   4. otherwise the block's threads wait at different barriers (a divergent barrier).
//      Hardware counts arrivals at barrier 0 whichever line they come from, so the
//      runtime releases everyone and carries on, as a GPU usually does.
// A thread runs without interruption from one barrier to the next, so a run is
// reproducible, and code that relies on lock-step warps without __syncwarp fails
// here as it may on a GPU since Volta.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

namespace kc {

struct Scheduler {
    Thread* threads = nullptr;
    unsigned nthreads = 0, capacity = 0;
    void* sched_sp = nullptr;
    char* stacks = nullptr;
    size_t stack_size = 0;     // usable bytes per fiber; a guard page sits below each
    void (*body)(void**) = nullptr;
    void** args = nullptr;
    volatile uint32_t* now_running = nullptr;  // linear thread id, for crash and timeout reports
};
Scheduler sched;

inline size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Allocates fibers for n threads once per worker: stacks with a PROT_NONE guard page
// under each, so a runaway recursion or a huge local array faults instead of silently
// overwriting the neighbouring thread's stack.
inline bool reserve_threads(unsigned n, size_t stack_size) {
    if (n <= sched.capacity) return true;
    size_t page = page_size();
    size_t slot = ((stack_size + page - 1) / page) * page + page;
    void* mem = mmap(nullptr, slot * n, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return false;
    for (unsigned i = 0; i < n; ++i) mprotect(static_cast<char*>(mem) + i * slot, page, PROT_NONE);
    sched.threads = new Thread[n];
    sched.stacks = static_cast<char*>(mem);
    sched.stack_size = slot;  // slot stride; usable part starts one page in
    sched.capacity = n;
    return true;
}

[[noreturn]] inline void fiber_main(void*) {
    sched.body(sched.args);
    cur->state = EXITED;
    kc_switch(&cur->sp, sched.sched_sp);
    __builtin_unreachable();
}

inline void yield_to_scheduler() { kc_switch(&cur->sp, sched.sched_sp); }

inline void syncthreads(int line) {
    cur->state = AT_SYNCTHREADS;
    cur->line = line;
    yield_to_scheduler();
}

inline void syncwarp(unsigned mask, int line) {
    cur->state = AT_SYNCWARP;
    cur->warp_mask = mask;
    cur->line = line;
    yield_to_scheduler();
}

// Rule 1 of the protocol; returns whether any warp was released.
inline bool release_complete_warps() {
    bool released = false;
    for (unsigned w = 0; w * 32 < sched.nthreads; ++w) {
        unsigned lo = w * 32, hi = lo + 32 < sched.nthreads ? lo + 32 : sched.nthreads;
        unsigned mask = 0;
        for (unsigned i = lo; i < hi; ++i)
            if (sched.threads[i].state == AT_SYNCWARP) mask |= sched.threads[i].warp_mask;
        if (!mask) continue;
        bool complete = true;
        for (unsigned i = lo; i < hi && complete; ++i) {
            uint8_t s = sched.threads[i].state;
            if ((mask >> (i - lo)) & 1u) complete = (s == AT_SYNCWARP || s == EXITED);
        }
        if (!complete) continue;
        for (unsigned i = lo; i < hi; ++i)
            if (sched.threads[i].state == AT_SYNCWARP) sched.threads[i].state = RUNNABLE;
        released = true;
    }
    return released;
}

// Runs one block to completion. `order` lists linear thread ids in schedule order.
inline void run_block(const uint32_t* order) {
    size_t page = page_size();
    unsigned bx = block_dim.x, by = block_dim.y;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Thread& t = sched.threads[i];
        t.idx = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        t.linear = i;
        t.state = RUNNABLE;
        t.line = 0;
        char* lo = sched.stacks + i * sched.stack_size + page;
        t.sp = fiber_init(lo, sched.stack_size - page, &fiber_main, nullptr);
    }
    for (;;) {
        for (unsigned k = 0; k < sched.nthreads; ++k) {
            Thread* t = &sched.threads[order[k]];
            if (t->state != RUNNABLE) continue;
            cur = t;
            *sched.now_running = t->linear;
            kc_switch(&sched.sched_sp, t->sp);
        }
        if (release_complete_warps()) continue;
        bool any_waiting = false;
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            Thread& t = sched.threads[i];
            if (t.state == AT_SYNCTHREADS || t.state == AT_SYNCWARP) {
                t.state = RUNNABLE;
                any_waiting = true;
            }
        }
        if (!any_waiting) return;
    }
}

}  // namespace kc
