// A cooperative launch's grid-wide barrier: cooperative_groups::this_grid().sync() (CUDA
// Programming Guide, "Grid Synchronization"). Every thread of the grid waits there until every
// thread of the grid has arrived, so all of a cooperative launch's blocks must run at once: here
// each block runs in a worker process of its own (forked_launch.worker_count), as the blocks of
// a cluster do (kc_cluster.cpp), with all its state where a block's is (its shared memory, its
// scheduler's fibers, checked mode's shadows and clocks). A block's threads first meet as at
// __syncthreads() (kc_scheduler.cpp, which calls grid_barrier once all of them wait at one
// grid.sync()); then its worker arrives at the grid barrier, a counter in memory that spawn maps
// shared before the fork, and sleeps on it (a futex) until the last block arrives.
// What a GPU leaves undefined stops the launch with a finding, plain runs included: grid.sync()
// in a launch that is not cooperative (its blocks need not be resident together, so it may
// hang), a grid.sync() that not every thread of a block reaches (divergent_barrier), and a block
// that returns while others wait at a grid.sync() it never reaches (which hangs a GPU).
// Checked mode: the barrier orders global memory between every two threads of the grid. Each
// block's barrier interval (chk.epoch) jumps to the largest any block reached, so the accesses
// before the barrier are of an earlier interval than any after it, whichever block made them
// (kc_check_global_races.cpp: check_grid_released).
#include <errno.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kc_runtime.h"

namespace kc {

struct GridBarrier {
    uint32_t arrived;       // blocks arrived at the current use
    uint32_t generation;    // uses completed (the futex word the waiting workers sleep on)
    uint32_t returned;      // a block that has returned: its linear id, plus one (0: none yet)
    uint32_t interval[2];   // checked mode: the largest barrier interval a use opened, by the use's parity
};

static GridBarrier* grid;   // the launch's, mapped by spawn (null: not a cooperative launch)

int grid_launch_start(const LaunchDesc* d) {
    if (!d->cooperative) return 0;
    void* m = mmap(nullptr, sizeof(GridBarrier), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -errno;
    grid = static_cast<GridBarrier*>(m);
    return 0;
}

void grid_launch_end() {   // in the caller, once the workers have it
    if (grid) munmap(grid, sizeof(GridBarrier));
    grid = nullptr;
}

bool grid_cooperative() { return launch && launch->cooperative; }

static uint64_t grid_blocks() { return uint64_t(grid_dim.x) * grid_dim.y * grid_dim.z; }

[[noreturn]] static void grid_finding(const char* problem, uint32_t other, uint32_t arrived, int line) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::grid_sync,
            "\"problem\":\"%s\",\"block\":%u,\"thread\":%u,\"line\":%d,\"other_block\":%u,\"arrived\":%u,"
            "\"blocks\":%llu}",
            problem, my_status->block, cur ? cur->linear : 0, line, other, arrived,
            (unsigned long long)grid_blocks());
    fflush(stdout);
    _exit(5);
}

void grid_sync(int line) {
    if (!grid_cooperative()) grid_finding("not_cooperative", 0, 0, line);
    syncthreads(line, BARRIER_GRID);
}

static long futex(uint32_t* word, int op, uint32_t value, const timespec* timeout) {
    return syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

// A peer that failed (a finding, a crash) ends the launch: this worker stops, and the caller
// reports the peer's failure.
static void stop_if_a_peer_failed() {
    for (unsigned w = 0; w < launch->workers; ++w) {
        uint32_t code = __atomic_load_n(&launch->status[w].code, __ATOMIC_RELAXED);
        if (code != RUNNING && code != OK) {
            my_status->code = OK;
            _exit(0);
        }
    }
}

void grid_barrier(int end_line) {
    // Every thread of the block at a grid.sync(): one that returned or waits at __syncthreads()
    // leaves the grid barrier without the block's arrival on a GPU. (Threads at grid.sync() on
    // different lines arrive at one barrier, as at __syncthreads(); checked mode reports that
    // divergence as it does for __syncthreads(): check_barrier.)
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS || t.op != BARRIER_GRID) divergent_barrier(end_line);
    }
    int line = sched.threads[0].line;
    // A worker asleep here is, for a block that polls memory (kc_poll.cpp: stalled_pass), one that
    // will not change it until that block arrives too.
    my_status->stalled = 1;
    uint32_t use = __atomic_load_n(&grid->generation, __ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    uint32_t mine = check_grid_interval(), seen = __atomic_load_n(&grid->interval[use & 1], __ATOMIC_SEQ_CST);
    while (seen < mine && !__atomic_compare_exchange_n(&grid->interval[use & 1], &seen, mine, false, __ATOMIC_SEQ_CST,
                                                       __ATOMIC_SEQ_CST)) {
    }
#endif
    if (__atomic_add_fetch(&grid->arrived, 1, __ATOMIC_SEQ_CST) == grid_blocks()) {
        __atomic_store_n(&grid->arrived, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&grid->generation, use + 1, __ATOMIC_SEQ_CST);
        futex(&grid->generation, FUTEX_WAKE, 0x7fffffff, nullptr);
    }
    while (__atomic_load_n(&grid->generation, __ATOMIC_SEQ_CST) == use) {
        timespec pause{0, 20 * 1000000};
        futex(&grid->generation, FUTEX_WAIT, use, &pause);
        stop_if_a_peer_failed();
        // A block that returned never arrives: the others wait for ever. (A block that passed this
        // use before it returned made the use complete first: the generation says so.)
        uint32_t returned = __atomic_load_n(&grid->returned, __ATOMIC_SEQ_CST);
        if (returned && __atomic_load_n(&grid->generation, __ATOMIC_SEQ_CST) == use)
            grid_finding("returned", returned - 1, __atomic_load_n(&grid->arrived, __ATOMIC_SEQ_CST), line);
    }
    my_status->stalled = 0;
    sched.progress++;
    __atomic_fetch_add(&my_status->progress, 1, __ATOMIC_RELAXED);
#ifdef KC_CHECKED
    check_grid_released(__atomic_load_n(&grid->interval[use & 1], __ATOMIC_SEQ_CST));
#endif
}

void grid_block_end(uint32_t block) {
    if (!grid) return;
    uint32_t none = 0;
    __atomic_compare_exchange_n(&grid->returned, &none, block + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

}  // namespace kc
