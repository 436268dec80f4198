// Thread-block clusters (PTX ISA: "Cluster of Cooperative Thread Arrays"; kc_ptx.h declares
// what translated inline PTX calls here). The blocks of a cluster run at the same time, each in
// a worker process of its own, so that each keeps all its state where a block's is: its
// shared memory at the fixed addresses the kernel's library gives it, its scheduler, and
// checked mode's shadows and clocks. The workers of a cluster take turns: the one whose turn
// it is runs one pass of its scheduler (kc_scheduler.cpp) and hands the turn to the next rank,
// so the blocks' threads interleave as one block's do, and a run is reproducible.
// A block reaches another's shared memory only through mapa's shared::cluster addresses:
// an arrival on its mbarrier, or the part of a multicast copy meant for it. Either is a
// message into the owner's inbox, performed by the owner at the start of its next turn (on a
// GPU both complete asynchronously too), so that the owner's checks see them as its own
// barrier's arrivals and the TMA's writes. The cluster barrier (barrier.cluster) counts in
// the group's memory, which only the worker whose turn it is touches.
// An arrival or a copy that reaches a block after it has finished: CUDA leaves an access to an
// exited block's shared memory undefined. A GPU lands it or fails the launch, by the blocks'
// timing (an H200 fails the late arrivals of test_hopper_clusters.py's leaves_early, and runs
// fast.cu's kernels 8 and 9, whose last arrivals nothing orders, right). Plain mode lands it, the
// finished block's shared memory kept until its cluster's end, and warns (ClusterExitWarning),
// since this schedule is not the GPU's timing; checked mode names the missing cluster barrier
// whatever the blocks' finishing order (check_remote_accesses).
#include <errno.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kc_runtime.h"

namespace kc {

constexpr unsigned MAX_CLUSTER = 16, INBOX = 512;
// A shared::cluster address of the block of rank r: its shared::cta address (a window offset,
// below 16 MiB) with r + 1 in the bits above; one without them is the executing block's own.
constexpr unsigned RANK_SHIFT = 24;
constexpr uint64_t OFFSET_MASK = (uint64_t(1) << RANK_SHIFT) - 1;

// barrier.cluster: arrivals in its current phase, phases completed, and the cluster's threads
// that have exited: those that had not arrived in the current phase (`exited`), and those that
// had (`left`, counted among `arrived` until the phase completes).
struct ClusterBarrier {
    uint32_t arrived, phase, exited, left;
};

enum MessageKind : uint32_t { ARRIVE, MULTICAST };
struct Message {
    uint32_t kind;
    int32_t line;
    uint32_t block, thread;    // the sender
    const void* pc;            // its asm call (Thread::asm_pc: the library lies at one address in every worker)
    uint64_t bar, dst;         // offsets in the owner's shared window
    int32_t x, y;
    CpuTensorMap map;          // a multicast's tensor map, as the sender read it
};

// Checked mode: the remote arrival of a thread of one block on another's mbarrier that the cluster
// barrier released last, as `released`, the phase the thread arrived in after it, plus one, as
// Thread::cluster_phase counts (0: no arrival; NEVER: the thread exited before arriving again).
struct RemoteAccess {
    uint32_t released;
    int32_t line;
    uint32_t block, thread, pc;
};
constexpr uint32_t NEVER = ~0u;

// The workers that run a group's clusters, one per rank, in the memory spawn maps before the fork.
struct Group {
    uint32_t turn;                         // the rank whose worker runs now (a futex word)
    uint32_t finished;                     // blocks of this group's clusters finished, all told
    ClusterBarrier barrier;
    uint64_t progress[MAX_CLUSTER];        // each rank's scheduler progress, as it last handed over
    uint32_t pending[MAX_CLUSTER];         // messages in each rank's inbox
    Message inbox[MAX_CLUSTER][INBOX];
    uint32_t blocks[MAX_CLUSTER];          // each rank's block of the cluster now running (linear)
    uint32_t waited[MAX_CLUSTER];          // checked mode: the last phase of barrier.cluster each rank's threads waited for
    RemoteAccess remote[MAX_CLUSTER][MAX_CLUSTER];   // checked mode: [target][sender], the one released last
};

static Group* groups;          // the launch's, mapped by spawn (null: no clusters)
static size_t groups_bytes;
static struct {
    Group* g = nullptr;        // this worker's group (null: a launch without clusters)
    unsigned rank = 0, size = 1, first_worker = 0;
    dim3 dims{1, 1, 1};        // blocks per cluster
    uint64_t clusters_done = 0, seen = 0;   // clusters this worker finished; the peers' progress seen
    uint64_t echoes = 0;       // the progress counted here for the peers' (not handed back to them)
    uint32_t block = 0;        // the linear block running now
} cl;

static uint64_t cluster_size(const LaunchDesc* d) { return uint64_t(d->cluster[0]) * d->cluster[1] * d->cluster[2]; }

int cluster_launch_start(const LaunchDesc* d) {
    if (cluster_size(d) <= 1) return 0;
    groups_bytes = sizeof(Group) * (d->workers / cluster_size(d));
    void* m = mmap(nullptr, groups_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return -errno;
    groups = static_cast<Group*>(m);
    return 0;
}

void cluster_launch_end() {   // in the caller, once the workers have it
    if (groups) munmap(groups, groups_bytes);
    groups = nullptr;
}

// ---- taking turns ------------------------------------------------------------------------------
static long futex(uint32_t* word, int op, uint32_t value, const timespec* timeout) {
    return syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

// A peer that failed (a finding, a crash) ends the launch: this worker stops, and the caller
// reports the peer's failure.
static void stop_if_a_peer_failed() {
    for (unsigned r = 0; r < cl.size; ++r) {
        uint32_t code = __atomic_load_n(&launch->status[cl.first_worker + r].code, __ATOMIC_RELAXED);
        if (code != RUNNING && code != OK) {
            my_status->code = OK;
            _exit(0);
        }
    }
}

static void wait_turn() {
    for (;;) {
        uint32_t t = __atomic_load_n(&cl.g->turn, __ATOMIC_ACQUIRE);
        if (t == cl.rank) return;
        timespec pause{0, 20 * 1000000};
        futex(&cl.g->turn, FUTEX_WAIT, t, &pause);
        stop_if_a_peer_failed();
    }
}

static void hand_over() {
    cl.g->progress[cl.rank] = sched.progress - cl.echoes;
    __atomic_store_n(&cl.g->turn, (cl.rank + 1) % cl.size, __ATOMIC_RELEASE);
    futex(&cl.g->turn, FUTEX_WAKE, 0x7fffffff, nullptr);
}

// The instruction a message performs, as a finding names it.
static const char* message_what(const Message& m) {
    return m.kind == ARRIVE ? "mbarrier.arrive.shared::cluster" : "cp.async.bulk.tensor (multicast)";
}

#ifdef KC_CHECKED
// Checked mode: a multicast copy into a block that has exited (a GPU fails the launch when one
// comes that late; checked mode does not follow multicasts by the cluster barrier's phases).
[[noreturn]] static void exited_target(const Message& m) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::operand,
            "\"problem\":\"cluster_exited\",\"what\":\"%s\",\"address\":%llu,\"value\":%u,\"need\":%u,\"line\":%d,"
            "\"block\":%u,\"thread\":%u}",
            message_what(m), (unsigned long long)m.bar, cl.block, cl.rank, m.line, m.block, m.thread);
    fflush(stdout);
    _exit(5);
}
#else
// Plain mode: the launch's first access that landed in a finished block, as its warning.
static void note_late(const Message& m) {
    if (my_status->note[0]) return;
    finding(my_status->note, sizeof my_status->note, Finding::late_access,
            "\"what\":\"%s\",\"target_block\":%u,\"target\":%u,\"line\":%d,\"block\":%u,\"thread\":%u}",
            message_what(m), cl.block, cl.rank, m.line, m.block, m.thread);
}
#endif

// `exited`: this worker's block has finished (its shared memory is kept till the cluster's end).
static void deliver(bool exited) {
    uint32_t& n = cl.g->pending[cl.rank];
    for (uint32_t i = 0; i < n; ++i) {
        const Message& m = cl.g->inbox[cl.rank][i];
#ifdef KC_CHECKED
        // No thread of the block is left for checked mode's clocks: an arrival is judged at the
        // cluster's end, whichever block finished first (check_remote_accesses); a multicast
        // is not followed there, and stops here.
        if (exited && m.kind == MULTICAST) exited_target(m);
        if (exited) continue;
#else
        if (exited) note_late(m);
#endif
        Thread* t = cur;   // performed here for the sender: its asm call's place, not this thread's
        const void* mine = t ? t->asm_pc : nullptr;
        if (t) t->asm_pc = m.pc;
        if (m.kind == ARRIVE) mbarrier_arrive_remote(shared_address(m.bar), m.line);
        else tma_copy_in(m.dst, &m.map, m.x, m.y, m.bar, m.line);
        if (t) t->asm_pc = mine;
    }
    n = 0;
}

// What the peers did since this worker's last turn counts as progress here (kc_poll.cpp: a
// block whose threads wait for another block's arrivals is not stalled while that block runs).
// Each worker hands over its own progress only: were the peers' echoed back, two stalled blocks
// would count each other's turns as progress for ever, and a cluster whose threads wait for
// each other would never be reported.
static void note_peers_progress() {
    uint64_t sum = 0;
    for (unsigned r = 0; r < cl.size; ++r)
        if (r != cl.rank) sum += cl.g->progress[r];
    if (sum != cl.seen) sched.progress++, cl.echoes++;
    cl.seen = sum;
}

void cluster_turn() {
    if (!cl.g) return;
    hand_over();
    wait_turn();
    note_peers_progress();
    deliver(false);
}

// ---- the blocks a worker runs ------------------------------------------------------------------
// Without clusters, worker w runs blocks w, w + workers, ...; with them, the workers form
// groups of one worker per rank, and group g runs clusters g, g + groups, ..., each worker the
// block of its rank.
void cluster_worker_start(const LaunchDesc* d, unsigned w, uint64_t& first, uint64_t& step, uint64_t& count) {
    uint64_t blocks = uint64_t(d->grid[0]) * d->grid[1] * d->grid[2], size = cluster_size(d);
    cl.dims = dim3(d->cluster[0], d->cluster[1], d->cluster[2]);
    if (size <= 1) {
        first = w, step = d->workers, count = blocks;
        return;
    }
    cl.size = unsigned(size);
    cl.rank = w % cl.size;
    cl.first_worker = w - cl.rank;
    cl.g = &groups[w / cl.size];
    first = w / cl.size, step = d->workers / cl.size, count = blocks / size;
    if (first < count) wait_turn();
}

uint64_t cluster_block(uint64_t unit) {
    if (!cl.g) return cl.block = uint32_t(unit);
    uint64_t gx = grid_dim.x / cl.dims.x, gy = grid_dim.y / cl.dims.y;
    uint64_t x = (unit % gx) * cl.dims.x + cl.rank % cl.dims.x;
    uint64_t y = (unit / gx % gy) * cl.dims.y + cl.rank / cl.dims.x % cl.dims.y;
    uint64_t z = (unit / (gx * gy)) * cl.dims.z + cl.rank / (cl.dims.x * cl.dims.y);
    cl.block = uint32_t(x + grid_dim.x * (y + uint64_t(grid_dim.y) * z));
    cl.g->blocks[cl.rank] = cl.block;
    return cl.block;
}

#ifdef KC_CHECKED
// ---- checked mode: remote accesses before their target's exit ------------------------------------
// A block's shared memory lasts until the block exits, so another block's access to it (here: an
// arrival on its mbarrier) must happen before that exit (CUDA Programming Guide, distributed shared
// memory). Only the cluster barrier orders the two: the accessing thread arrives at it after the
// access (or a thread that met it at __syncthreads() since), and a thread of the target block
// waits for that phase before the block exits. Each thread holds its remote accesses not yet
// followed by an arrival of its own (`unreleased`, by target rank); its next arrival releases them
// at that phase, its exit never. __syncthreads() hands every thread's to the block (`met`), whose
// next arrival, by any thread, releases them; the block's end never. Each block counts the phases
// its threads waited for. At the cluster's end the phases tell, whichever block finished first and
// whether or not the access happened to come before the exit here.
struct Unreleased {
    uint16_t targets;   // ranks, a bit each
    int32_t line;       // the last such access's line, its asm call's offset, and its thread
    uint32_t pc, thread;
};
static Unreleased unreleased[1024];   // by the thread's linear index (a block has at most 1024)
static Unreleased met;

static void note_remote_access(unsigned target, int line) {
    Unreleased& u = unreleased[cur->linear];
    u = {uint16_t(u.targets | 1u << target), line, asm_pc(), cur->linear};
}

// `u`'s accesses released at the cluster barrier's phase `released` (NEVER: they never are).
static void release(Unreleased& u, uint32_t released) {
    for (unsigned r = 0; u.targets; ++r, u.targets >>= 1) {
        RemoteAccess& a = cl.g->remote[r][cl.rank];
        if ((u.targets & 1) && released >= a.released) a = {released, u.line, cl.block, u.thread, u.pc};
    }
}

void cluster_block_barrier() {
    if (!cl.g) return;
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        Unreleased& u = unreleased[i];
        if (u.targets) met = {uint16_t(met.targets | u.targets), u.line, u.pc, u.thread};
        u.targets = 0;
    }
}

[[noreturn]] static void unordered_exit(const RemoteAccess& a, unsigned target) {
    my_status->code = CHECK_FAILED;
    finding(my_status->message, sizeof my_status->message, Finding::cluster_exit,
            "\"block\":%u,\"thread\":%u,\"pc\":%u,\"line\":%d,\"target\":%u,\"target_block\":%u,"
            "\"released\":%d,\"waited\":%u}",
            a.block, a.thread, a.pc, a.line, target, cl.g->blocks[target],
            a.released == NEVER ? -1 : int(a.released), cl.g->waited[target]);
    fflush(stdout);
    _exit(5);
}

// Once every block of the cluster has finished: each remote access must have been released at a
// phase its target's threads waited for. Then the records are cleared for the group's next cluster.
static void check_remote_accesses() {
    for (unsigned x = 0; x < cl.size; ++x)
        for (unsigned y = 0; y < cl.size; ++y)
            if (cl.g->remote[x][y].released > cl.g->waited[x]) unordered_exit(cl.g->remote[x][y], x);
    memset(cl.g->remote, 0, sizeof cl.g->remote);
    memset(cl.g->waited, 0, sizeof cl.g->waited);
}
#endif

// This worker's block has finished: it waits, still taking its turns, until every block of the
// cluster has, so that the group starts its next cluster together. An arrival or a copy that
// reaches the finished block meanwhile lands in plain mode, with a warning (deliver: checked
// mode judges the arrival at the cluster's end, and stops at the copy).
void cluster_block_end() {
    if (!cl.g) return;
#ifdef KC_CHECKED
    release(met, NEVER);   // met at __syncthreads() after their last arrival
#endif
    cl.g->finished++;
    uint64_t all = ++cl.clusters_done * cl.size;
#ifdef KC_CHECKED
    if (cl.g->finished == all) check_remote_accesses();   // the cluster's last block to finish
#endif
    while (cl.g->finished < all) {
        hand_over();
        wait_turn();
        deliver(true);
    }
}

void cluster_worker_end() {
    if (cl.g) hand_over();
}

// ---- special registers, mapa, remote arrivals, multicast -----------------------------------------
uint32_t cluster_register(ClusterRegister which, int axis) {
    const uint32_t dims[3] = {cl.dims.x, cl.dims.y, cl.dims.z}, grid[3] = {grid_dim.x, grid_dim.y, grid_dim.z};
    const uint32_t ctaid[3] = {block_idx.x, block_idx.y, block_idx.z};
    switch (which) {
    case CLUSTER_CTARANK:
        return ctaid[0] % dims[0] + dims[0] * (ctaid[1] % dims[1] + dims[1] * (ctaid[2] % dims[2]));
    case CLUSTER_NCTARANK: return dims[0] * dims[1] * dims[2];
    case CLUSTER_ID: return ctaid[axis] / dims[axis];
    case CLUSTER_NID: return grid[axis] / dims[axis];
    case CLUSTER_CTAID: return ctaid[axis] % dims[axis];
    case CLUSTER_NCTAID: return dims[axis];
    default: return cl.g != nullptr;   // %is_explicit_cluster
    }
}

uint64_t mapa(uint64_t address, uint32_t rank, int line) {
    KC_ASM_CALL;
    if (rank >= cl.size) operand_error("mapa_rank", "mapa.shared::cluster", nullptr, rank, cl.size, line);
    return (address & OFFSET_MASK) | uint64_t(rank + 1) << RANK_SHIFT;
}

// The rank a shared::cluster address names (this block's: its own), and its window offset.
static unsigned rank_of(uint64_t address) {
    uint64_t tag = address >> RANK_SHIFT;
    return tag ? unsigned(tag - 1) : cl.rank;
}

uint64_t cluster_local(uint64_t address, const char* what, int line) {
    KC_ASM_CALL;
    if (rank_of(address) != cl.rank)
        operand_error("cluster_remote", what, nullptr, rank_of(address), cl.rank, line);
    return address & OFFSET_MASK;
}

// A message for rank r; the sender waits while r's inbox is full (r empties it at its turn).
static Message& post(unsigned r, MessageKind kind, uint64_t bar, int line) {
    while (cl.g->pending[r] == INBOX) yield_to_scheduler();
    Message& m = cl.g->inbox[r][cl.g->pending[r]++];
    m.kind = kind, m.line = line, m.block = cl.block, m.thread = cur->linear, m.pc = cur->asm_pc, m.bar = bar;
    sched.progress++;
    return m;
}

uint64_t mbarrier_arrive_cluster(uint64_t address, uint32_t count, int line) {
    KC_ASM_CALL;
    unsigned r = rank_of(address);
    if (r == cl.rank) return mbarrier_arrive(shared_address(address & OFFSET_MASK), count, 0, line);
    for (uint32_t i = 0; i < count; ++i) post(r, ARRIVE, address & OFFSET_MASK, line);
#ifdef KC_CHECKED
    note_remote_access(r, line);
#endif
    return 0;   // (PTX: a remote arrival's state is the sink `_`)
}

void tma_load_multicast(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, uint16_t mask, int line) {
    KC_ASM_CALL;
    tma_box_aligned(cluster_local(dst, "cp.async.bulk.tensor (multicast)", line), "cp.async.bulk.tensor", line);
    tma_multicast_slice(dst, map, x, y, bar, mask, line);
}

void tma_multicast_slice(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, uint16_t mask, int line) {
    if (mask >> cl.size)
        operand_error("multicast_mask", "cp.async.bulk.tensor (multicast)", nullptr, mask, cl.size, line);
    dst = cluster_local(dst, "cp.async.bulk.tensor (multicast)", line);
    bar = cluster_local(bar, "cp.async.bulk.tensor (multicast)", line);
    for (unsigned r = 0; r < cl.size; ++r) {
        if (!((mask >> r) & 1)) continue;
        if (r == cl.rank) {
            tma_copy_in(dst, map, x, y, bar, line);
            continue;
        }
        Message& m = post(r, MULTICAST, bar, line);
        m.dst = dst, m.x = x, m.y = y;
        memcpy(&m.map, map, sizeof m.map);
    }
}

// ---- barrier.cluster ----------------------------------------------------------------------------
// Every thread of every block of the cluster arrives once per phase; a wait returns once the
// phase it arrived in has completed. The phase completes when every thread of the cluster that
// has not exited has arrived (PTX ISA, barrier.cluster: a wait is for "all non-exited threads of
// the cluster"), so a thread's exit can complete it; a GPU runs so with a block of the cluster,
// or half of each block's threads, returning before the barrier. A waiting thread stays
// RUNNABLE (as at an mbarrier), so that turns go on to the blocks still to arrive.
// Checked mode: the barrier orders what the block's threads did before their arrivals before
// what each does after its wait, as an mbarrier of the block would (kc_check_races.cpp); the
// phase, completed in whichever block arrived last, is gathered here at this block's first
// wait that finds it complete.
static ClusterBarrier solo;   // a launch without clusters: each block is a cluster of one
#ifdef KC_CHECKED
static const char checked_key = 0;   // the cluster barrier's clocks, as those of an mbarrier at this address
static uint32_t checked_phase;       // the phases whose arrivals the clocks have gathered
#endif

// The phase completes once the arrivals and the exits make up the cluster; once every thread has
// exited, the barrier is ready for the group's next cluster.
static void complete_phase(ClusterBarrier& b) {
    uint32_t threads = cl.size * sched.nthreads;
    if (b.exited + b.left == threads) b.arrived = b.exited = b.left = 0;
    else if (b.arrived + b.exited == threads) b.phase++, b.arrived = 0, b.exited += b.left, b.left = 0;
}

void cluster_arrive(int) {
    KC_ASM_CALL;
    ClusterBarrier& b = cl.g ? cl.g->barrier : solo;
#ifdef KC_CHECKED
    check_mbarrier_arrive(&checked_key);
#endif
    cur->cluster_phase = b.phase + 1;
#ifdef KC_CHECKED
    if (cl.g) release(unreleased[cur->linear], cur->cluster_phase), release(met, cur->cluster_phase);
#endif
    b.arrived++;
    complete_phase(b);
    sched.progress++;
}

void cluster_barrier_state(uint32_t& arrived, uint32_t& exited, uint32_t& threads) {
    const ClusterBarrier& b = cl.g ? cl.g->barrier : solo;
    arrived = b.arrived, exited = b.exited + b.left, threads = cl.size * sched.nthreads;
}

void cluster_thread_exit() {
    ClusterBarrier& b = cl.g ? cl.g->barrier : solo;
#ifdef KC_CHECKED
    if (cl.g) release(unreleased[cur->linear], NEVER);
#endif
    if (cur->cluster_phase == b.phase + 1) b.left++;   // it arrived in the current phase
    else b.exited++;
    complete_phase(b);
}

void cluster_wait(int line) {
    KC_ASM_CALL;
    const ClusterBarrier& b = cl.g ? cl.g->barrier : solo;
    cur->cluster_wait = true;   // for a report of a block that cannot finish (kc_ptx.cpp: cluster_stall)
    cur->line = line;
    while (b.phase < cur->cluster_phase) yield_to_scheduler();
    cur->cluster_wait = false;
#ifdef KC_CHECKED
    if (cl.g && cur->cluster_phase > cl.g->waited[cl.rank]) cl.g->waited[cl.rank] = cur->cluster_phase;
    if (checked_phase < b.phase) {
        check_mbarrier_complete(&checked_key);
        checked_phase = b.phase;
    }
    check_mbarrier_acquire(&checked_key);
#endif
}

}  // namespace kc
