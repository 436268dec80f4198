// The block scheduler: the threads of a block as fibers, each run from one barrier or warp
// operation to the next, and the waits they reach resolved (block barriers, warp operations,
// warp-collective operations). The launcher (kc_launch.cpp) runs its blocks on it one after
// another; a thread polling memory yields to it through poll() (kc_poll.cpp). The only unit
// that includes kc_fiber.h: its context switch is assembly, defined once per library.
#include <sys/mman.h>

#include "kc_fiber.h"
#include "kc_runtime.h"

namespace kc {

Thread* cur;
uint3 block_idx;
dim3 block_dim, grid_dim;

// Protocol. Every thread starts RUNNABLE. A pass walks the threads in schedule order;
// each RUNNABLE one runs until it reaches a barrier (AT_SYNCTHREADS), a warp operation
// (AT_WARP: __syncwarp, a shuffle, a vote) or returns (EXITED), and then switches straight
// to the next RUNNABLE thread of the pass. The last one switches back to run_block, which
// resolves the waits:
//   1. a group of a warp's threads waiting at a warp operation with one mask is released
//      when every live lane of the mask waits there (lanes that exited are left out); the
//      operation's results (shuffled values, ballots) are computed then, for all of them.
//      A warp-collective operation (wmma: kc_warp.h) is performed, lane by lane, only when
//      all 32 lanes of the warp wait at that one call; otherwise its lanes are released
//      without it (checked mode reports that instead);
//   2. otherwise, if every live thread of the block waits at __syncthreads, all are
//      released: the next barrier interval begins (__syncthreads_count and its kin
//      compute their result now). Threads that arrived at barrier 0 with bar.arrive 0, n
//      and went on count as there for those that wait with bar.sync 0, n (kc_ptx.cpp:
//      release_barrier_zero, checked before threads that still run are resumed, since those
//      may wait for the ones released). Where they wait at grid.sync(), the grid's other blocks
//      must arrive too before they are released (kc_grid.cpp: grid_barrier);
//   3. otherwise, if every thread has exited, the block is done;
//   4. otherwise the block's threads wait at different barriers (a divergent barrier).
//      Hardware counts arrivals at barrier 0 whichever line they come from, so the
//      runtime releases everyone and carries on, as a GPU usually does (a wmma operation
//      among them is not performed). Checked mode reports it instead.
// A thread runs without interruption from one barrier to the next, so a run is
// reproducible, and code that relies on lock-step warps without __syncwarp fails here as
// it may on a GPU since Volta.

Scheduler sched;

// Lightweight guard regions (Linux 6.13): page-table markers that fault like PROT_NONE pages
// without splitting the mapping in two areas per guard, as mprotect does.
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

// Fibers for n threads, once per worker: stacks with a guard page under each, so a runaway
// recursion or a local array larger than the stack faults (and is reported as a stack
// overflow) instead of silently overwriting the neighbouring thread's stack. The guards are
// guard regions where the kernel has them: a launch of 1024-thread blocks then spends about
// 3 ms of each worker's time on them instead of about 16 ms for 1024 mprotect calls; elsewhere
// (an older kernel, a sandbox that refuses the advice) PROT_NONE pages.
bool reserve_threads(unsigned n, size_t stack_size) {
    if (n <= sched.capacity) return true;
    size_t page = page_size();
    size_t slot = ((stack_size + page - 1) / page) * page + page;
    void* mem = mmap(nullptr, slot * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return false;
    bool light = true;
    for (unsigned i = 0; i < n; ++i) {
        char* guard = static_cast<char*>(mem) + i * slot;
        if (light) light = madvise(guard, page, MADV_GUARD_INSTALL) == 0;
        if (!light && mprotect(guard, page, PROT_NONE) != 0) return false;
    }
    sched.threads = new Thread[n];
    async_reserve(n);
    sched.stacks = static_cast<char*>(mem);
    sched.slot = slot;
    sched.capacity = n;
    return true;
}

// The running thread has just blocked or exited: hand over to the next RUNNABLE thread
// after it in this pass, or back to run_block when there is none.
void yield_to_scheduler() {
#ifdef KC_CHECKED
    check_thread_yield();
#endif
    Thread* self = cur;
    for (unsigned k = self->pos + 1; k < sched.nthreads; ++k) {
        Thread* t = &sched.threads[sched.order[k]];
        if (t->state == RUNNABLE) {
            cur = t;
            my_status->thread = t->linear;
            // While t runs, the record and the top of the saved stack of the thread after it
            // come into the cache: a block's fibers touch more than L1 holds, so otherwise
            // every switch waits for them (with this, the tiled kernel at Width 256 takes its
            // workers about 0.83 of the CPU time it took them without).
            if (k + 1 < sched.nthreads) {
                const Thread* u = &sched.threads[sched.order[k + 1]];
                __builtin_prefetch(u);
                const char* sp = static_cast<const char*>(u->sp);
                for (int line = 0; line < 4; ++line) __builtin_prefetch(sp + 64 * line);
            }
            kc_switch(&self->sp, t->sp);
            return;
        }
    }
    kc_switch(&self->sp, sched.sched_sp);
}

[[noreturn]] void fiber_main(void*) {
    sched.body(sched.args);
    async_thread_exit(cur->linear);
    sched.exited++;
    cluster_thread_exit();
    named_barriers_thread_exit();
    sched.progress++;
    cur->state = EXITED;
    yield_to_scheduler();
    __builtin_unreachable();
}

// A thread's arrival at barrier 0, once its form is checked: it waits there.
static inline __attribute__((always_inline)) void arrive_zero(int line, uint8_t op, int pred) {
    sched.progress++;
    sched.at_sync++;
    if (op == BARRIER_COUNT || op == BARRIER_AND || op == BARRIER_OR) sched.sync_valued = true;
    else if (op == BARRIER_GRID) sched.at_grid++;
    cur->state = AT_SYNCTHREADS;
    cur->op = op;
    cur->value = uint64_t(pred != 0);
    cur->line = line;
    yield_to_scheduler();
}

// The first arrival of a use of barrier 0 sets its form (barrier_form); a call of its own, so
// that the arrivals after it, which need no check, save no registers.
static __attribute__((noinline)) void syncthreads_first(int line, uint8_t op, int pred) {
    static const char* const name[] = {"__syncthreads()", "__syncthreads_count()", "__syncthreads_and()",
                                       "__syncthreads_or()", "bar.sync", "grid.sync()"};
    barrier_form(0, op == BARRIER_COUNTED ? sched.nthreads : 0, name[op], line);
    arrive_zero(line, op, pred);
}

void syncthreads(int line, uint8_t op, int pred) {
    // The form this use of barrier 0 already has (all but its first arrival): nothing to check.
    if (sched.barrier_form[0] != (op == BARRIER_COUNTED ? sched.nthreads : 0) + 1)
        return syncthreads_first(line, op, pred);
    arrive_zero(line, op, pred);
}

uint64_t warp_op(uint8_t op, unsigned mask, uint64_t value, int arg, int width, int line) {
    sched.progress++;
    cur->state = AT_WARP;
    cur->op = op;
    cur->mask = mask;
    cur->value = value;
    cur->arg = arg;
    cur->width = width;
    cur->line = line;
    ++sched.waiting_warp;
    yield_to_scheduler();
    return cur->result;
}

bool warp_collective(Collective* c) {
    sched.progress++;
    cur->state = AT_WARP;
    cur->op = COLLECTIVE;
    cur->mask = 0xffffffffu;
    cur->value = reinterpret_cast<uint64_t>(c);
    cur->arg = 0;
    cur->width = 32;
    cur->line = c->line;
    ++sched.waiting_warp;
    yield_to_scheduler();
    return cur->result == 1;
}

// The lanes of the warp starting at thread lo that wait at the same collective call as t.
static unsigned collective_lanes(unsigned lo, unsigned hi, const Thread& t) {
    unsigned m = 0;
    CollectiveRun run = reinterpret_cast<const Collective*>(t.value)->run;
    for (unsigned i = lo; i < hi; ++i) {
        const Thread& u = sched.threads[i];
        if (u.state == AT_WARP && u.op == COLLECTIVE && u.line == t.line &&
            reinterpret_cast<const Collective*>(u.value)->run == run)
            m |= 1u << (i - lo);
    }
    return m;
}

// Every lane's part of a collective, lane by lane, each as its own thread (for checked
// mode's accounting of the accesses it makes).
static void run_collective(unsigned lo) {
    Thread* running = cur;
    Collective* lanes[32];
    for (unsigned l = 0; l < 32; ++l) lanes[l] = reinterpret_cast<Collective*>(sched.threads[lo + l].value);
    for (unsigned l = 0; l < 32; ++l) {
        cur = &sched.threads[lo + l];
        my_status->thread = cur->linear;
        lanes[l]->run(lanes, l);
    }
    cur = running;
    my_status->thread = running->linear;
}

unsigned active_mask(int line) {
    // On a GPU, the lanes that execute this call together. Here: the lanes of the warp that
    // wait at this line once no thread of the block can run. Where lanes of one warp wait
    // at __activemask() on several lines, the earliest line goes first, so that lanes that
    // skipped a branch wait for those that took it, as a warp reconverges after an `if`.
    // Mask 0: it is no lane's member mask, so no other warp operation counts it as arrived.
    return unsigned(warp_op(ACTIVEMASK, 0, 0, 0, 32, line));
}

// The lanes of the warp starting at lo that wait at __activemask() on the same line as t.
static unsigned activemask_group(unsigned lo, unsigned hi, const Thread& t) {
    unsigned m = 0;
    for (unsigned i = lo; i < hi; ++i) {
        const Thread& u = sched.threads[i];
        if (u.state == AT_WARP && u.op == ACTIVEMASK && u.line == t.line) m |= 1u << (i - lo);
    }
    return m;
}

void thread_exit(int line) { cur->exit_line = line; }

// The result of warp operation `op` for lane `lane` of a released group of warp `w`.
static uint64_t warp_result(unsigned w, unsigned group, const Thread& t, unsigned lane) {
    const Thread* base = &sched.threads[w * 32];
    auto val = [&](unsigned l) { return base[l].value; };
    int width = t.width;
    unsigned seg = lane & ~unsigned(width - 1);
    switch (t.op) {
    case SHFL_IDX: return val(seg + (unsigned(t.arg) & unsigned(width - 1)));
    case SHFL_UP: return lane >= seg + unsigned(t.arg) ? val(lane - t.arg) : t.value;
    case SHFL_DOWN: return lane + unsigned(t.arg) < seg + unsigned(width) ? val(lane + t.arg) : t.value;
    case SHFL_XOR: {
        unsigned src = lane ^ (unsigned(t.arg) & 31u);
        return (src & ~unsigned(width - 1)) == seg ? val(src) : t.value;
    }
    default: break;
    }
    uint64_t acc = 0;
    bool first = true;
    for (unsigned l = 0; l < 32; ++l) {
        if (!((group >> l) & 1u)) continue;
        uint64_t v = val(l);
        switch (t.op) {
        case BALLOT: acc |= uint64_t(v != 0) << l; break;
        case ANY: acc = acc || v; break;
        case ALL: acc = first ? v != 0 : (acc && v); break;
        case MATCH_ANY: if (v == t.value) acc |= 1ull << l; break;
        case MATCH_ALL: acc = first ? group : (v == val(lane) ? acc : 0); break;
        case REDUCE_ADD: acc = uint32_t(acc + v); break;
        case REDUCE_ADD_S: acc = uint64_t(int64_t(acc) + int64_t(v)); break;
        case REDUCE_MIN: acc = first || uint32_t(v) < uint32_t(acc) ? v : acc; break;
        case REDUCE_MAX: acc = first || uint32_t(v) > uint32_t(acc) ? v : acc; break;
        case REDUCE_MIN_S: acc = first || int64_t(v) < int64_t(acc) ? v : acc; break;
        case REDUCE_MAX_S: acc = first || int64_t(v) > int64_t(acc) ? v : acc; break;
        case REDUCE_AND: acc = first ? v : (acc & v); break;
        case REDUCE_OR: acc |= v; break;
        case REDUCE_XOR: acc ^= v; break;
        default: break;
        }
        first = false;
    }
    return acc;
}

// Rule 1 of the protocol; returns whether any group was released. A group is the
// threads of one warp waiting with one mask; it is complete when every lane of the mask
// waits in it or has exited. (Checked mode reports a mask that names an exited lane, or
// lanes waiting at different operations.)
bool release_complete_warps() {
    if (!sched.waiting_warp) return false;
    bool released = false;
    for (unsigned w = 0; w * 32 < sched.nthreads; ++w) {
        unsigned lo = w * 32, hi = lo + 32 < sched.nthreads ? lo + 32 : sched.nthreads;
        bool reconverged = false;   // one __activemask() group per warp and pass: the earliest line's
        for (unsigned i = lo; i < hi; ++i) {
            const Thread& t = sched.threads[i];
            if (t.state != AT_WARP) continue;
            if (t.op == ACTIVEMASK) {
                bool earliest = !reconverged;
                for (unsigned j = lo; j < hi && earliest; ++j)
                    earliest = !(sched.threads[j].state == AT_WARP && sched.threads[j].op == ACTIVEMASK &&
                                 sched.threads[j].line < t.line);
                if (!earliest) continue;
                unsigned group = activemask_group(lo, hi, t);
                reconverged = true;
                for (unsigned l = 0; l < 32; ++l)
                    if ((group >> l) & 1u) {
                        sched.threads[lo + l].result = group;
                        sched.threads[lo + l].state = RUNNABLE;
                        --sched.waiting_warp;
                    }
                released = true;
                continue;
            }
            unsigned mask = t.mask, group = 0;
            bool complete = true;
            for (unsigned l = 0; l < 32 && complete; ++l) {
                if (!((mask >> l) & 1u)) continue;
                if (lo + l >= hi) continue;   // lanes past the block's last thread do not exist
                const Thread& u = sched.threads[lo + l];
                if (u.state == AT_WARP && u.mask == mask) group |= 1u << l;
                else if (u.state != EXITED) complete = false;
            }
            if (!complete || !group) continue;
            bool whole = false;   // a collective that all 32 lanes reached: performed
            if (t.op == COLLECTIVE) {
#ifdef KC_CHECKED
                check_collective(w, group);
#endif
                whole = hi - lo == 32 && collective_lanes(lo, hi, t) == 0xffffffffu;
                if (whole) run_collective(lo);
            } else {
#ifdef KC_CHECKED
                check_warp_group(w, mask, t.line);
#endif
            }
            for (unsigned l = 0; l < 32; ++l) {
                if (!((group >> l) & 1u)) continue;
                Thread& u = sched.threads[lo + l];
                u.result = u.op == COLLECTIVE ? uint64_t(whole) : warp_result(w, group, u, l);
            }
            for (unsigned l = 0; l < 32; ++l)
                if ((group >> l) & 1u) {
                    sched.threads[lo + l].state = RUNNABLE;
                    --sched.waiting_warp;
                }
#ifdef KC_CHECKED
            if (t.op == SYNCWARP) check_warp_released(w, group);
#endif
            released = true;
        }
    }
    return released;
}

// Rule 2: the block barrier releases; __syncthreads_count and its kin get their result.
void release_block_barrier() {
    if (!sched.sync_valued && !sched.waiting_warp) {   // the common case: each waits at a barrier without a value
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            Thread& t = sched.threads[i];
            if (t.state == AT_SYNCTHREADS) t.result = 0, t.state = RUNNABLE;
        }
        sched.at_sync = 0;
        sched.at_grid = 0;
        sched.barrier_form[0] = 0;
        return;
    }
    uint64_t count = 0, all = sched.at_sync ? 0 : 1, any = 0;
    // Only __syncthreads_count, _and and _or arrive with a value: without them every value is 0.
    if (sched.sync_valued) {
        all = 1;
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            const Thread& t = sched.threads[i];
            if (t.state != AT_SYNCTHREADS) continue;
            count += t.value;
            all &= t.value;
            any |= t.value;
        }
    }
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Thread& t = sched.threads[i];
        if (t.state == AT_SYNCTHREADS || t.state == AT_WARP) {
            t.result = t.state == AT_WARP && t.op == COLLECTIVE ? 0   // not performed (rule 4)
                       : t.op == BARRIER_COUNT ? count : t.op == BARRIER_AND ? all : any;
            t.state = RUNNABLE;
        }
    }
    sched.waiting_warp = 0;
    sched.at_sync = 0;
    sched.at_grid = 0;
    sched.sync_valued = false;
    sched.barrier_form[0] = 0;
}

// Rule 4 where it cannot carry on (checked mode's every divergent barrier, and a grid.sync() that
// not every thread of the block reached): where each thread is, as a divergence finding.
[[noreturn]] void divergent_barrier(int end_line) {
    char* buf = my_status->message;
    const int n = int(sizeof my_status->message);
    int k = finding(buf, n, Finding::divergence, "\"block\":%u,\"end_line\":%d,\"states\":\"", my_status->block,
                    end_line);
    for (unsigned i = 0; i < sched.nthreads && k < n - 8; ++i) {
        const Thread& t = sched.threads[i];
        buf[k++] = t.state == AT_SYNCTHREADS ? (t.op == BARRIER_GRID ? 'G' : 'S') : t.state == AT_WARP ? 'W'
                   : t.state == EXITED ? 'E' : 'R';
    }
    k += snprintf(buf + k, n - k, "\",\"lines\":[");
    for (unsigned i = 0; i < sched.nthreads && k < n - 16; ++i) {
        const Thread& t = sched.threads[i];
        k += snprintf(buf + k, n - k, i ? ",%d" : "%d", t.state == EXITED ? t.exit_line : t.line);
    }
    snprintf(buf + k, n - k, "]}");
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

extern "C" void kc_register_namespace_shared();   // generated with the launch stubs

// Runs one block to completion. `order` lists linear thread ids in schedule order.
void run_block(const uint32_t* order, uint32_t block, int end_line) {
    sched.order = order;
    size_t page = page_size();
    static const Thread blank{};
    unsigned bx = block_dim.x, by = block_dim.y;
    uint3 idx{0, 0, 0};   // thread i's threadIdx, counted up as i is (no division a thread)
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Thread& t = sched.threads[i];
        t = blank;
        t.idx = idx;
        if (++idx.x == bx) {
            idx.x = 0;
            if (++idx.y == by) idx.y = 0, ++idx.z;
        }
        t.linear = i;
        t.state = RUNNABLE;
        // Stacks sit at a stride that is a multiple of the page size, so their tops would
        // all map to the same cache sets; shifting each by a different number of cache
        // lines ("colouring") keeps the fibers' live frames from evicting each other.
        char* lo = sched.stacks + i * sched.slot + page;
        size_t colour = (i % 61) * 64;   // (a division by a constant: a multiplication)
        t.sp = fiber_init(lo, sched.slot - page - colour, &fiber_main, nullptr);
    }
    for (unsigned k = 0; k < sched.nthreads; ++k) sched.threads[order[k]].pos = k;
    async_block_start(sched.nthreads);
    sched.waiting_warp = 0;
    memset(sched.named_arrived, 0, sizeof sched.named_arrived);
    memset(sched.barrier_form, 0, sizeof sched.barrier_form);
    sched.exited = 0;
    sched.at_sync = 0;
    sched.at_grid = 0;
    sched.sync_valued = false;
    sched.named_used = false;
#ifdef KC_CHECKED
    check_block_start(block);
#else
    (void)block;
    (void)end_line;
#endif
    kc_register_namespace_shared();
    uint64_t progress = sched.progress, stalled_since = 0, others = 0;
    for (;;) {
        cluster_turn();   // the other blocks of its cluster run a pass each first (kc_cluster.cpp)
        for (unsigned k = 0; k < sched.nthreads; ++k) {   // one pass: enter its first thread
            Thread* t = &sched.threads[order[k]];
            if (t->state != RUNNABLE) continue;
            cur = t;
            my_status->thread = t->linear;
            kc_switch(&sched.sched_sp, t->sp);
            break;
        }
        if (release_complete_warps() || release_barrier_zero()) continue;
        // Threads that yielded in poll (RUNNABLE): none where every thread waits at barrier 0 or
        // has exited (the counts tell without a look at each thread, the common case).
        bool spinning = false;
        if (sched.at_sync + sched.exited != sched.nthreads || sched.waiting_warp)
            for (unsigned i = 0; i < sched.nthreads && !spinning; ++i) spinning = sched.threads[i].state == RUNNABLE;
        if (spinning) {
            if (sched.progress != progress) {
                progress = sched.progress;
                stalled_since = 0;
                my_status->stalled = 0;
                __atomic_fetch_add(&my_status->progress, 1, __ATOMIC_RELAXED);
            } else {
                stalled_pass(block, stalled_since, others);
            }
            continue;
        }
        my_status->stalled = 0;
        bool all_exited = sched.exited == sched.nthreads;
        if (all_exited) {
#ifdef KC_CHECKED
            check_interval_end();
#endif
            return;
        }
        barrier_zero_stall(block);
#ifdef KC_CHECKED
        check_barrier(end_line);  // reports a divergent barrier; otherwise opens the next interval
        cluster_block_barrier();
#endif
        if (sched.at_grid) grid_barrier(end_line);   // the whole grid meets (kc_grid.cpp)
        release_block_barrier();
    }
}

}  // namespace kc
