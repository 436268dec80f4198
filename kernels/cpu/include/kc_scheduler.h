// The block scheduler: runs the threads of one block as fibers, in a fixed order.
//
// Protocol. Every thread starts RUNNABLE. A pass walks the threads in schedule order;
// each RUNNABLE one runs until it reaches a barrier (state AT_SYNCTHREADS or
// AT_SYNCWARP) or returns (EXITED), and then switches straight to the next RUNNABLE
// thread of the pass (one switch per hand-over, not two through a scheduler). The
// last one switches back to run_block, which resolves the barriers:
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
    const uint32_t* order = nullptr;   // linear thread ids in schedule order
    unsigned waiting_warp = 0;         // threads now at __syncwarp
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

// The running thread has just blocked or exited: hand over to the next RUNNABLE thread
// after it in this pass, or back to run_block when there is none.
inline void yield_to_scheduler() {
    Thread* self = cur;
    for (unsigned k = self->pos + 1; k < sched.nthreads; ++k) {
        Thread* t = &sched.threads[sched.order[k]];
        if (t->state == RUNNABLE) {
            cur = t;
            *sched.now_running = t->linear;
            kc_switch(&self->sp, t->sp);
            return;
        }
    }
    kc_switch(&self->sp, sched.sched_sp);
}

[[noreturn]] inline void fiber_main(void*) {
    sched.body(sched.args);
    cur->state = EXITED;
    yield_to_scheduler();
    __builtin_unreachable();
}

inline void syncthreads(int line) {
    cur->state = AT_SYNCTHREADS;
    cur->line = line;
    yield_to_scheduler();
}

inline void syncwarp(unsigned mask, int line) {
    cur->state = AT_SYNCWARP;
    cur->warp_mask = mask;
    ++sched.waiting_warp;
    cur->line = line;
    yield_to_scheduler();
}

// Rule 1 of the protocol; returns whether any warp was released.
inline bool release_complete_warps() {
    bool released = false;
    if (!sched.waiting_warp) return false;
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
            if (sched.threads[i].state == AT_SYNCWARP) {
                sched.threads[i].state = RUNNABLE;
                --sched.waiting_warp;
            }
#ifdef KC_CHECKED
        check_warp_released(w);
#endif
        released = true;
    }
    return released;
}

// Runs one block to completion. `order` lists linear thread ids in schedule order.
inline void run_block(const uint32_t* order, uint32_t block, int end_line) {
    sched.order = order;
    size_t page = page_size();
    unsigned bx = block_dim.x, by = block_dim.y;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Thread& t = sched.threads[i];
        t.idx = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        t.linear = i;
        t.state = RUNNABLE;
        t.line = 0;
        // Stacks sit at a stride that is a multiple of the page size, so their tops would
        // all map to the same cache sets; shifting each by a different number of cache
        // lines ("colouring") keeps the fibers' live frames from evicting each other.
        char* lo = sched.stacks + i * sched.stack_size + page;
        size_t colour = (i % 61) * 64;
        t.sp = fiber_init(lo, sched.stack_size - page - colour, &fiber_main, nullptr);
    }
    for (unsigned k = 0; k < sched.nthreads; ++k) sched.threads[order[k]].pos = k;
    sched.waiting_warp = 0;
#ifdef KC_CHECKED
    check_block_start(block);
#else
    (void)block;
    (void)end_line;
#endif
    for (;;) {
        for (unsigned k = 0; k < sched.nthreads; ++k) {   // one pass: enter its first thread
            Thread* t = &sched.threads[order[k]];
            if (t->state != RUNNABLE) continue;
            cur = t;
            *sched.now_running = t->linear;
            kc_switch(&sched.sched_sp, t->sp);
            break;
        }
        if (release_complete_warps()) continue;
#ifdef KC_CHECKED
        bool all_exited = true;
        for (unsigned i = 0; i < sched.nthreads && all_exited; ++i) all_exited = sched.threads[i].state == EXITED;
        if (all_exited) {
            check_interval_end();
            return;
        }
        check_barrier(end_line);  // reports a divergent barrier; otherwise opens the next interval
#endif
        bool any_waiting = false;
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            Thread& t = sched.threads[i];
            if (t.state == AT_SYNCTHREADS || t.state == AT_SYNCWARP) {
                t.state = RUNNABLE;
                any_waiting = true;
            }
        }
        sched.waiting_warp = 0;
        if (!any_waiting) return;
    }
}

}  // namespace kc
