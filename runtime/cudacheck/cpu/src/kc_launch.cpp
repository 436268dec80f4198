// The launcher. A launch forks worker processes, each running every `workers`-th block of the
// grid on the scheduler (kc_scheduler.cpp). Why processes: nothing a kernel does (a wild
// pointer, an endless loop, a failed assert) may harm the Python process that launched it.
// Each worker is a fork of the caller; global arrays live in memory the caller mapped
// MAP_SHARED, so the workers' writes come back, while everything else a worker touches dies
// with it. The caller (runtime/cudacheck/cpu/forked_launch.py) waits for the workers with a time
// limit and kills them past it; a worker also dies with its caller (PR_SET_PDEATHSIG) and on
// its own alarm, so none is ever left behind spinning.
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>

#include <initializer_list>

#include "kc_runtime.h"

namespace kc {

WorkerStatus* my_status;
const LaunchDesc* launch;

[[noreturn]] void launch_bounds_exceeded(long long bound, int line) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::launch_bounds,
            "\"bound\":%lld,\"threads\":%u,\"line\":%d}", bound, block_dim.x * block_dim.y * block_dim.z, line);
    fflush(stdout);
    _exit(5);
}

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
    uint64_t first, step, count;   // blocks, or clusters (kc_cluster.cpp)
    cluster_worker_start(d, w, first, step, count);
    for (uint64_t unit = first; unit < count; unit += step) {
        uint64_t b = cluster_block(unit);
        block_idx = uint3{unsigned(b % d->grid[0]), unsigned((b / d->grid[0]) % d->grid[1]),
                          unsigned(b / (uint64_t(d->grid[0]) * d->grid[1]))};
        my_status->block = unsigned(b);
        run_block(order, unsigned(b), d->end_line);
        grid_block_end(unsigned(b));
        cluster_block_end();
        my_status->blocks_done++;
        __atomic_fetch_add(&my_status->progress, 1, __ATOMIC_RELAXED);
    }
    cluster_worker_end();
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
    int rc = cluster_launch_start(d);
    if (!rc) rc = grid_launch_start(d);
    if (rc) {
        cluster_launch_end();
        return rc;
    }
    for (unsigned w = 0; w < d->workers; ++w) {
        d->status[w].code = RUNNING;
        pid_t pid = fork();
        if (pid == 0) worker_main(body, d, w);
        if (pid < 0) {
            int err = errno;
            for (unsigned v = 0; v < w; ++v) kill(pids[v], SIGKILL);
            cluster_launch_end();
            grid_launch_end();
            return -err;
        }
        pids[w] = pid;
    }
    cluster_launch_end();
    grid_launch_end();
    return 0;
}

}  // namespace kc
