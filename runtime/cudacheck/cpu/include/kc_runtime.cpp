// The CPU runtime: fibers, the block scheduler and the launcher. One translation unit,
// compiled once per variant (plain, checked, polling) and linked into every kernel library
// (runtime/cudacheck/cpu/compiler.py); the kernel's own unit sees only cuda_cpu.h. In checked
// mode the checks are units of their own, linked beside it (kc_check.h: kc_check_*.cpp),
// whose hooks (kc_runtime.h) the scheduler and the launcher call.
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <initializer_list>

#include "kc_fiber.h"
#include "kc_runtime.h"

namespace kc {

Thread* cur;
uint3 block_idx;
dim3 block_dim, grid_dim;
WorkerStatus* my_status;
const LaunchDesc* launch;

// Dynamic shared memory (kc_runtime.h).
alignas(256) unsigned char dynamic_smem[DYNAMIC_SHARED_CAPACITY + 4096];

// ---- the block scheduler ------------------------------------------------------------
//
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
//      compute their result now);
//   3. otherwise, if every thread has exited, the block is done;
//   4. otherwise the block's threads wait at different barriers (a divergent barrier).
//      Hardware counts arrivals at barrier 0 whichever line they come from, so the
//      runtime releases everyone and carries on, as a GPU usually does (a wmma operation
//      among them is not performed). Checked mode reports it instead.
// A thread runs without interruption from one barrier to the next, so a run is
// reproducible, and code that relies on lock-step warps without __syncwarp fails here as
// it may on a GPU since Volta.

Scheduler sched;

// ---- asynchronous copies (cp.async through <cuda_pipeline.h>) --------------------------
//
// Each thread has a queue of the copies it issued, each tagged with its batch: the number of
// __pipeline_commit() calls before it. __pipeline_wait_prior(n) completes every copy of the
// committed batches but the newest n; a copy not yet committed is in no batch and stays in
// flight. A copy is performed when it completes, by its own thread, and not before: on a
// GPU it lands at some moment between its issue and the wait, so a kernel that reads the
// destination before waiting (or, in another thread, before the barrier after the wait) may
// see the old contents, as it does here. A thread that exits completes what it has in flight.
struct Pipe {
    AsyncCopy* queue = nullptr;
    uint32_t n = 0, cap = 0;
    uint64_t committed = 0;
};
static Pipe* pipes = nullptr;   // one per thread, reset as each block starts

inline size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Fibers for n threads, once per worker: stacks with a PROT_NONE guard page under each, so
// a runaway recursion or a local array larger than the stack faults (and is reported as a
// stack overflow) instead of silently overwriting the neighbouring thread's stack.
bool reserve_threads(unsigned n, size_t stack_size) {
    if (n <= sched.capacity) return true;
    size_t page = page_size();
    size_t slot = ((stack_size + page - 1) / page) * page + page;
    void* mem = mmap(nullptr, slot * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return false;
    for (unsigned i = 0; i < n; ++i) mprotect(static_cast<char*>(mem) + i * slot, page, PROT_NONE);
    sched.threads = new Thread[n];
    pipes = new Pipe[n];
    sched.stacks = static_cast<char*>(mem);
    sched.slot = slot;
    sched.capacity = n;
    return true;
}

// The running thread has just blocked or exited: hand over to the next RUNNABLE thread
// after it in this pass, or back to run_block when there is none.
void yield_to_scheduler() {
    Thread* self = cur;
    for (unsigned k = self->pos + 1; k < sched.nthreads; ++k) {
        Thread* t = &sched.threads[sched.order[k]];
        if (t->state == RUNNABLE) {
            cur = t;
            my_status->thread = t->linear;
            kc_switch(&self->sp, t->sp);
            return;
        }
    }
    kc_switch(&self->sp, sched.sched_sp);
}

static void async_complete_all(Pipe& p);

[[noreturn]] void fiber_main(void*) {
    sched.body(sched.args);
    if (pipes[cur->linear].n) async_complete_all(pipes[cur->linear]);
    sched.progress++;
    cur->state = EXITED;
    yield_to_scheduler();
    __builtin_unreachable();
}

void syncthreads(int line, uint8_t op, int pred) {
    sched.progress++;
    cur->state = AT_SYNCTHREADS;
    cur->op = op;
    cur->value = uint64_t(pred != 0);
    cur->line = line;
    yield_to_scheduler();
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
    uint64_t count = 0, all = 1, any = 0;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS) continue;
        count += t.value;
        all &= t.value;
        any |= t.value;
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
}

// ---- threads that wait for memory to change ---------------------------------------------
//
// A thread polling a location (a flag or a lock another thread sets) never reaches a
// barrier, so the protocol above would run it forever. Every atomic and every volatile read
// comes through poll(): after SPIN_POLLS reads in a row of one location, with the same
// operands (a loop of atomicMax(&m, x[i]) passes new ones) and nothing else between them that
// checked mode sees, that find it unchanged, the thread yields, staying RUNNABLE, and the
// pass goes on to the block's other threads (one of them may be the one to set it, as on a
// GPU since Volta); it yields again after as many more.
// A pass in which no thread got further (no barrier, exit or changed value) leaves the
// block stalled: it waits for another worker's block. When every worker is stalled or done
// for STALL_MS, nothing can change the location any more: the block waits for a block that
// cannot run beside it, and the worker reports where it polls (ForwardProgressError).
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
static uint32_t pc_offset(const void* pc) {
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
static void stalled_pass(uint32_t block, uint64_t& since, uint64_t& seen) {
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

extern "C" void kc_register_namespace_shared();   // generated with the launch stubs

// Runs one block to completion. `order` lists linear thread ids in schedule order.
void run_block(const uint32_t* order, uint32_t block, int end_line) {
    sched.order = order;
    size_t page = page_size();
    unsigned bx = block_dim.x, by = block_dim.y;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Thread& t = sched.threads[i];
        t = Thread{};
        t.idx = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        t.linear = i;
        t.state = RUNNABLE;
        // Stacks sit at a stride that is a multiple of the page size, so their tops would
        // all map to the same cache sets; shifting each by a different number of cache
        // lines ("colouring") keeps the fibers' live frames from evicting each other.
        char* lo = sched.stacks + i * sched.slot + page;
        size_t colour = (i % 61) * 64;
        t.sp = fiber_init(lo, sched.slot - page - colour, &fiber_main, nullptr);
    }
    for (unsigned k = 0; k < sched.nthreads; ++k) sched.threads[order[k]].pos = k;
    for (unsigned i = 0; i < sched.nthreads; ++i) pipes[i].n = 0, pipes[i].committed = 0;
    sched.waiting_warp = 0;
#ifdef KC_CHECKED
    check_block_start(block);
#else
    (void)block;
    (void)end_line;
#endif
    kc_register_namespace_shared();
    uint64_t progress = sched.progress, stalled_since = 0, others = 0;
    for (;;) {
        for (unsigned k = 0; k < sched.nthreads; ++k) {   // one pass: enter its first thread
            Thread* t = &sched.threads[order[k]];
            if (t->state != RUNNABLE) continue;
            cur = t;
            my_status->thread = t->linear;
            kc_switch(&sched.sched_sp, t->sp);
            break;
        }
        if (release_complete_warps()) continue;
        bool spinning = false;   // threads that yielded in poll
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
        bool all_exited = true;
        for (unsigned i = 0; i < sched.nthreads && all_exited; ++i) all_exited = sched.threads[i].state == EXITED;
        if (all_exited) {
#ifdef KC_CHECKED
            check_interval_end();
#endif
            return;
        }
#ifdef KC_CHECKED
        check_barrier(end_line);  // reports a divergent barrier; otherwise opens the next interval
#endif
        release_block_barrier();
    }
}

// ---- the launcher --------------------------------------------------------------------
//
// A launch forks worker processes, each running every `workers`-th block of the grid.
// Why processes: nothing a kernel does (a wild pointer, an endless loop, a failed assert)
// may harm the Python process that launched it. Each worker is a fork of the caller;
// global arrays live in memory the caller mapped MAP_SHARED, so the workers' writes come
// back, while everything else a worker touches dies with it. The caller
// (runtime/cudacheck/cpu/runner.py) waits for the workers with a time limit and kills them past it;
// a worker also dies with its caller (PR_SET_PDEATHSIG) and on its own alarm, so none is
// ever left behind spinning.

[[noreturn]] void assert_fail(const char* expr, int line) {
    if (!my_status) {   // host code of a whole program (kc_host.cpp): as the C library's assert
        fprintf(stderr, "kernel.cu:%d: Assertion `%s' failed.\n", line, expr);
        fflush(stderr);
        abort();
    }
    my_status->code = ASSERT_FAILED;
    my_status->line = line;
    snprintf(my_status->message, sizeof my_status->message, "%s", expr);
    fflush(stdout);
    _exit(2);
}

static void on_fatal_signal(int sig, siginfo_t* info, void*) {
    my_status->code = CRASHED;
    my_status->signal = sig;
    my_status->fault_address = reinterpret_cast<uint64_t>(info->si_addr);
    // A fault in a fiber's guard page is a stack overflow: say so, with the stack's size.
    uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr), s = reinterpret_cast<uintptr_t>(sched.stacks);
    if (sched.stacks && a >= s && a < s + sched.slot * sched.capacity && (a - s) % sched.slot < page_size())
        my_status->stack_overflow = 1;
    _exit(128 + sig);
}

void install_fatal_signal_handler(void (*handler)(int, siginfo_t*, void*)) {
    static char alt_stack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

[[noreturn]] static void worker_main(void (*body)(void**), const LaunchDesc* d, unsigned w) {
    // Die with the caller, whatever kills it (a kernel restart, the OOM killer); the check
    // after prctl covers a caller that died before it took effect.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != d->parent_pid) _exit(9);
    prctl(PR_SET_NAME, "kc-worker");
    // And never outlive the launch's time limit, even if the caller's wait went wrong.
    if (d->time_limit_s) alarm(d->time_limit_s);
    my_status = &d->status[w];
    launch = d;
    if (d->output_fd >= 0) {
        dup2(d->output_fd, 1);
        dup2(d->output_fd, 2);
    }
    install_fatal_signal_handler(&on_fatal_signal);
    signal(SIGALRM, SIG_DFL);   // a worker's time limit is its own alarm
    block_dim = dim3(d->block[0], d->block[1], d->block[2]);
    grid_dim = dim3(d->grid[0], d->grid[1], d->grid[2]);
    unsigned nthreads = d->block[0] * d->block[1] * d->block[2];
    uint32_t* order = static_cast<uint32_t*>(malloc(sizeof(uint32_t) * nthreads));
    if (!reserve_threads(nthreads, d->stack_size) || !order) {
        my_status->code = OUT_OF_MEMORY;
        _exit(4);
    }
    for (unsigned i = 0; i < nthreads; ++i) order[i] = d->order ? d->order[i] : i;
#ifdef KC_CHECKED
    check_worker_start(d, w);
#endif
    sched.nthreads = nthreads;
    sched.body = body;
    sched.args = d->args;
    uint64_t nblocks = uint64_t(d->grid[0]) * d->grid[1] * d->grid[2];
    for (uint64_t b = w; b < nblocks; b += d->workers) {
        block_idx = uint3{unsigned(b % d->grid[0]), unsigned((b / d->grid[0]) % d->grid[1]),
                          unsigned(b / (uint64_t(d->grid[0]) * d->grid[1]))};
        my_status->block = unsigned(b);
        run_block(order, unsigned(b), d->end_line);
        my_status->blocks_done++;
        __atomic_fetch_add(&my_status->progress, 1, __ATOMIC_RELAXED);
    }
    fflush(stdout);
    fflush(stderr);
    my_status->code = OK;
    _exit(0);
}

// Forks the workers and returns at once; the caller waits for them. Returns 0, or -errno
// if a fork failed (the workers already started are killed).
int spawn(void (*body)(void**), const LaunchDesc* d, int32_t* pids) {
    fflush(stdout);
    fflush(stderr);
#ifdef KC_CHECKED
    if (d->check) {   // the shadow all workers share: mapped before they are forked
        int rc = global_launch_start(d);
        if (rc) return rc;
    }
#endif
    for (unsigned w = 0; w < d->workers; ++w) {
        d->status[w].code = RUNNING;
        pid_t pid = fork();
        if (pid == 0) worker_main(body, d, w);
        if (pid < 0) {
            int err = errno;
            for (unsigned v = 0; v < w; ++v) kill(pids[v], SIGKILL);
            return -err;
        }
        pids[w] = pid;
    }
    return 0;
}

// ---- shared variables -------------------------------------------------------------------
// Static shared memory a launch has touched, for the GPU's limit (checked in both modes).
static uint64_t static_shared_seen[2];   // bit per shared variable id < 128
static uint64_t static_shared_bytes;

[[noreturn]] static void shared_limit_exceeded(size_t bytes) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::shared_limit,
             "\"static\":%zu,\"dynamic\":%llu,\"limit\":%llu}", bytes,
             (unsigned long long)launch->shared_mem, (unsigned long long)launch->shared_limit);
    fflush(stdout);
    _exit(5);
}

void shared_extent(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims) {
    if (!launch) return;
    if (id < 128 && !((static_shared_seen[id / 64] >> (id % 64)) & 1)) {
        static_shared_seen[id / 64] |= 1ull << (id % 64);
        static_shared_bytes += bytes;
        if (static_shared_bytes > 48 * 1024 || static_shared_bytes + launch->shared_mem > launch->shared_limit)
            shared_limit_exceeded(static_shared_bytes);
    }
#ifdef KC_CHECKED
    shared_region(id, name, addr, bytes, elem, granule, rank, dims, false);
#else
    (void)name, (void)addr, (void)elem, (void)granule, (void)rank, (void)dims;
#endif
}

void* dynamic_shared(const char* name, int id, size_t elem, size_t granule) {
#ifdef KC_CHECKED
    unsigned dims[1] = {0};
    if (launch) shared_region(id, name, dynamic_smem, launch->shared_mem, elem, granule, 1, dims, true);
#else
    (void)name, (void)id, (void)elem, (void)granule;
#endif
    return dynamic_smem;
}

// ---- operands CUDA forbids ---------------------------------------------------------------
// Reported in both modes where a GPU refuses them too (a misaligned wmma pointer or copy, a
// copy size cp.async does not have), and by checked mode alone where CUDA leaves the result
// undefined (a leading dimension); runtime/cudacheck/cpu/findings/ words each problem.
[[noreturn]] void operand_error(const char* problem, const char* what, const void* ptr, uint64_t value,
                                uint64_t need, int line) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::operand,
             "\"problem\":\"%s\",\"what\":\"%s\",\"address\":%llu,\"value\":%llu,"
             "\"need\":%llu,\"line\":%d,\"block\":%u,\"thread\":%u}",
             problem, what, (unsigned long long)reinterpret_cast<uintptr_t>(ptr), (unsigned long long)value,
             (unsigned long long)need, line, my_status->block, cur ? cur->linear : 0);
    fflush(stdout);
    _exit(5);
}

// ---- asynchronous copies (see AsyncCopy above) ------------------------------------------
void async_copy(void* dst, const void* src, size_t size, size_t zfill, void* pc, int line) {
    const char* what = "__pipeline_memcpy_async";
    // <cuda_pipeline.h> traps on any other size or zfill; cp.async faults on a misaligned address.
    if (size != 4 && size != 8 && size != 16) operand_error("copy_size", what, dst, size, 0, line);
    if (zfill > size) operand_error("zfill", what, dst, zfill, size, line);
    if (reinterpret_cast<uintptr_t>(dst) % size) operand_error("misaligned_dst", what, dst, size, size, line);
    if (reinterpret_cast<uintptr_t>(src) % size) operand_error("misaligned_src", what, src, size, size, line);
    Pipe& p = pipes[cur->linear];
    if (p.n == p.cap) {
        uint32_t cap = p.cap ? 2 * p.cap : 16;
        AsyncCopy* q = static_cast<AsyncCopy*>(realloc(p.queue, sizeof(AsyncCopy) * cap));
        if (!q) {
            my_status->code = OUT_OF_MEMORY;
            _exit(4);
        }
        p.queue = q;
        p.cap = cap;
    }
    AsyncCopy c{static_cast<char*>(dst), static_cast<const char*>(src), uint32_t(size), uint32_t(zfill), p.committed,
                pc, line};
#ifdef KC_CHECKED
    check_async_issue(c);
#endif
    p.queue[p.n++] = c;
}

void async_commit() { pipes[cur->linear].committed++; }

static void async_perform(const AsyncCopy& c) {
#ifdef KC_CHECKED
    check_async_complete(c);
#endif
    // byte by byte: the checked runtime's memcpy would account the copy as the runtime's own access
    uint32_t from_src = c.size - c.zfill;
    for (uint32_t i = 0; i < c.size; ++i) c.dst[i] = i < from_src ? c.src[i] : 0;
}

// Completes the copies of batches older than `before` (all: ~0), in the order they were issued.
static void async_complete(Pipe& p, uint64_t before) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p.n; ++i) {
        if (p.queue[i].batch < before) async_perform(p.queue[i]);
        else p.queue[kept++] = p.queue[i];
    }
    p.n = kept;
}

static void async_complete_all(Pipe& p) { async_complete(p, ~uint64_t(0)); }

void async_wait_prior(size_t n) {
    Pipe& p = pipes[cur->linear];
    if (n > 8) n = 8;   // <cuda_pipeline.h> waits for all but 8 at most (_CUDA_PIPELINE_MAX_STAGES)
    if (p.committed > n) async_complete(p, p.committed - n);
}

}  // namespace kc

// ---- atomics -------------------------------------------------------------------------
// Real atomics: blocks in other workers share global memory. The _block and _system
// variants are the same operation here (one block runs at a time per worker).
// Every atomic is checked (checked mode) and then counted as a poll of its location (a lock
// or a flag another thread sets: see poll).
#ifdef KC_CHECKED
#define KC_ATOMIC_CHECK(p, reads, cas) \
    ::kc::atomic_access((void*)(p), sizeof(*(p)), __builtin_return_address(0), reads, cas)
#else
#define KC_ATOMIC_CHECK(p, reads, cas) ((void)0)
#endif
#define KC_ATOMIC_HOOK_OF(p, reads, cas, key) \
    (KC_ATOMIC_CHECK(p, reads, cas), ::kc::poll((p), sizeof(*(p)), __builtin_return_address(0), (key)))
#define KC_ATOMIC_HOOK(p, reads) KC_ATOMIC_HOOK_OF(p, reads, false, operand_key(v))

// An atomic's operand as bits, for poll: a loop that passes new operands is not waiting.
template <class T>
static uint64_t operand_key(T v) {
    if constexpr (sizeof(T) == 8) return __builtin_bit_cast(uint64_t, v);
    else if constexpr (sizeof(T) == 4) return __builtin_bit_cast(uint32_t, v);
    else return __builtin_bit_cast(uint16_t, v);
}
#define KC_ATOMIC_VARIANTS(R, NAME, PARAMS, ARGS) \
    R NAME##_block PARAMS { return NAME ARGS; } \
    R NAME##_system PARAMS { return NAME ARGS; }

#define KC_FETCH(NAME, T, BUILTIN) \
    T NAME(T* p, T v) { KC_ATOMIC_HOOK(p, true); return BUILTIN(p, v, __ATOMIC_SEQ_CST); } \
    KC_ATOMIC_VARIANTS(T, NAME, (T* p, T v), (p, v))
#define KC_FETCH_INT(NAME, BUILTIN) KC_FETCH(NAME, int, BUILTIN) KC_FETCH(NAME, unsigned int, BUILTIN) \
    KC_FETCH(NAME, unsigned long long, BUILTIN)
KC_FETCH_INT(atomicAdd, __atomic_fetch_add)
KC_FETCH(atomicSub, int, __atomic_fetch_sub)
KC_FETCH(atomicSub, unsigned int, __atomic_fetch_sub)
KC_FETCH_INT(atomicAnd, __atomic_fetch_and)
KC_FETCH_INT(atomicOr, __atomic_fetch_or)
KC_FETCH_INT(atomicXor, __atomic_fetch_xor)

// The rest are compare-and-swap loops: new = f(old).
template <class T, class F>
static T cas_loop(T* p, F f) {
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old, f(old), true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
// Floats through their bits, so that the comparison is of bits, not values (NaN, -0.0).
template <class T, class U, class F>
static T cas_bits(T* p, F f) {
    U* q = reinterpret_cast<U*>(p);
    U old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
        T o, n;
        memcpy(&o, &old, sizeof o);
        n = f(o);
        U nb;
        memcpy(&nb, &n, sizeof nb);
        if (__atomic_compare_exchange_n(q, &old, nb, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return o;
    }
}
float atomicAdd(float* p, float v) { KC_ATOMIC_HOOK(p, true); return cas_bits<float, uint32_t>(p, [v](float o) { return o + v; }); }
double atomicAdd(double* p, double v) { KC_ATOMIC_HOOK(p, true); return cas_bits<double, uint64_t>(p, [v](double o) { return o + v; }); }
KC_ATOMIC_VARIANTS(float, atomicAdd, (float* p, float v), (p, v))
KC_ATOMIC_VARIANTS(double, atomicAdd, (double* p, double v), (p, v))

#define KC_EXCH(T) \
    T atomicExch(T* p, T v) { KC_ATOMIC_HOOK(p, false); return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); } \
    KC_ATOMIC_VARIANTS(T, atomicExch, (T* p, T v), (p, v))
KC_EXCH(int) KC_EXCH(unsigned int) KC_EXCH(unsigned long long)
float atomicExch(float* p, float v) {
    KC_ATOMIC_HOOK(p, false);
    uint32_t b, o;
    memcpy(&b, &v, 4);
    o = __atomic_exchange_n(reinterpret_cast<uint32_t*>(p), b, __ATOMIC_SEQ_CST);
    float r;
    memcpy(&r, &o, 4);
    return r;
}
KC_ATOMIC_VARIANTS(float, atomicExch, (float* p, float v), (p, v))

#define KC_MINMAX(T) \
    T atomicMin(T* p, T v) { KC_ATOMIC_HOOK(p, true); return cas_loop(p, [v](T o) { return v < o ? v : o; }); } \
    T atomicMax(T* p, T v) { KC_ATOMIC_HOOK(p, true); return cas_loop(p, [v](T o) { return v > o ? v : o; }); } \
    KC_ATOMIC_VARIANTS(T, atomicMin, (T* p, T v), (p, v)) KC_ATOMIC_VARIANTS(T, atomicMax, (T* p, T v), (p, v))
KC_MINMAX(int) KC_MINMAX(unsigned int) KC_MINMAX(unsigned long long) KC_MINMAX(long long)

// atomicInc: ((old >= val) ? 0 : (old + 1)); atomicDec: ((old == 0) | (old > val)) ? val : (old - 1).
unsigned int atomicInc(unsigned int* p, unsigned int v) {
    KC_ATOMIC_HOOK(p, true);
    return cas_loop(p, [v](unsigned o) { return o >= v ? 0u : o + 1; });
}
unsigned int atomicDec(unsigned int* p, unsigned int v) {
    KC_ATOMIC_HOOK(p, true);
    return cas_loop(p, [v](unsigned o) { return (o == 0 || o > v) ? v : o - 1; });
}
KC_ATOMIC_VARIANTS(unsigned int, atomicInc, (unsigned int* p, unsigned int v), (p, v))
KC_ATOMIC_VARIANTS(unsigned int, atomicDec, (unsigned int* p, unsigned int v), (p, v))

#define KC_CAS(T) \
    T atomicCAS(T* p, T compare, T v) { \
        KC_ATOMIC_HOOK_OF(p, true, true, operand_key(v) * 31 + operand_key(compare)); \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return compare; \
    } \
    KC_ATOMIC_VARIANTS(T, atomicCAS, (T* p, T c, T v), (p, c, v))
KC_CAS(int) KC_CAS(unsigned int) KC_CAS(unsigned long long) KC_CAS(unsigned short)

// ---- device variables ------------------------------------------------------------------
// The section of __device__ and __constant__ variables, page-aligned by the linker script.
extern "C" char __start_kc_device[] __attribute__((weak));
extern "C" char __stop_kc_device[] __attribute__((weak));

// Called by the loader (share_device_memory, runtime/cudacheck/cpu/__init__.py) once, in the
// caller's process: the section becomes shared memory, so every worker of every launch of this
// module sees one copy, as blocks on a GPU see one device memory and values persist from launch
// to launch.
extern "C" __attribute__((visibility("default"))) int kc_share_device_memory(void** start, uint64_t* bytes) {
    *start = __start_kc_device;
    *bytes = __stop_kc_device - __start_kc_device;
    if (!*bytes) return 0;
    void* copy = malloc(*bytes);
    if (!copy) return -ENOMEM;
    memcpy(copy, __start_kc_device, *bytes);
    void* m = mmap(__start_kc_device, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (m == MAP_FAILED) {
        free(copy);
        return -errno;
    }
    memcpy(__start_kc_device, copy, *bytes);
    free(copy);
    return 0;
}

#ifdef KC_POLL
#include "kc_poll.h"
#endif
