// A launch: fork worker processes, each running every `workers`-th block of the grid.
//
// Why processes: nothing a kernel does (a wild pointer, an endless loop, a failed
// assert) may harm the Python process that launched it. Each worker is a fork of the
// caller; global arrays live in memory the caller mapped MAP_SHARED, so the workers'
// writes come back, while everything else a worker touches dies with it. The caller
// (kernels/cpu/runner.py) waits for the workers with a time limit and kills them past it.
#pragma once
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <initializer_list>

namespace kc {

WorkerStatus* my_status;
const LaunchDesc* launch;

[[noreturn]] inline void assert_fail(const char* expr, int line) {
    my_status->code = ASSERT_FAILED;
    my_status->line = line;
    snprintf(my_status->message, sizeof my_status->message, "%s", expr);
    fflush(stdout);
    _exit(2);
}

inline void on_fatal_signal(int sig, siginfo_t* info, void*) {
    my_status->code = CRASHED;
    my_status->signal = sig;
    my_status->fault_address = reinterpret_cast<uint64_t>(info->si_addr);
    _exit(128 + sig);
}

inline void install_crash_handlers() {
    static char alt_stack[64 * 1024];  // the fault may be a fiber's stack overflow
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = &on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
    // The caller may ignore or handle these (Jupyter does); a worker must die by them.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

[[noreturn]] inline void worker_main(void (*body)(void**), const LaunchDesc* d, unsigned w) {
    my_status = &d->status[w];
    launch = d;
    if (d->output_fd >= 0) {
        dup2(d->output_fd, 1);
        dup2(d->output_fd, 2);
    }
    install_crash_handlers();
    block_dim = dim3(d->block[0], d->block[1], d->block[2]);
    grid_dim = dim3(d->grid[0], d->grid[1], d->grid[2]);
    unsigned nthreads = d->block[0] * d->block[1] * d->block[2];
    static unsigned char* smem = nullptr;
    if (d->shared_mem) smem = static_cast<unsigned char*>(malloc(d->shared_mem));
    dyn_smem = smem;
    uint32_t* order = static_cast<uint32_t*>(malloc(sizeof(uint32_t) * nthreads));
    if (!reserve_threads(nthreads, d->stack_size) || !order || (d->shared_mem && !smem)) {
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
    sched.now_running = &my_status->thread;
    uint64_t nblocks = uint64_t(d->grid[0]) * d->grid[1] * d->grid[2];
    for (uint64_t b = w; b < nblocks; b += d->workers) {
        block_idx = uint3{unsigned(b % d->grid[0]), unsigned((b / d->grid[0]) % d->grid[1]),
                          unsigned(b / (uint64_t(d->grid[0]) * d->grid[1]))};
        my_status->block = unsigned(b);
        run_block(order, unsigned(b), d->end_line);
        my_status->blocks_done++;
    }
    fflush(stdout);
    fflush(stderr);
    my_status->code = OK;
    _exit(0);
}

// Forks the workers and returns at once; the caller waits for them. Returns 0, or
// -errno if a fork failed (the workers already started are killed).
inline int spawn(void (*body)(void**), const LaunchDesc* d, int32_t* pids) {
    fflush(stdout);
    fflush(stderr);
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

}  // namespace kc
