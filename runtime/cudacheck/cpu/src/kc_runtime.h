// What the runtime's own translation units share: one unit per role,
//   kc_scheduler.cpp  a block's threads as fibers: barriers, warp operations, collectives
//   kc_poll.cpp       threads that poll memory, and the watchdog of blocks that only poll
//   kc_launch.cpp     the launcher: worker processes, fatal signals, failed asserts
//   kc_memory.cpp     shared variables, asynchronous copies, atomics, __device__ variables
//   kc_ptx.cpp        what translated inline PTX needs: the shared window, mbarriers
//   kc_async.cpp      and its async proxy: the TMA's tensor copies, wgmma
//   kc_cluster.cpp    thread-block clusters: the workers of a cluster's blocks taking turns
//   kc_grid.cpp       a cooperative launch's grid.sync(): the workers of all its blocks meeting
// and, in checked mode, the checks (kc_check.h and its kc_check_*.cpp). A kernel's unit never
// includes it: the kernel sees cuda_cpu.h alone. Each unit is compiled once per variant and
// cached (runtime/cudacheck/cpu/compiler.py: runtime_objects).
#pragma once
#include <unistd.h>

#include "../include/cuda_cpu.h"
#include "kc_abi.h"
#include "kc_findings.h"
#include "kc_warp.h"

// Everything declared here is the library's own (-fvisibility=hidden gives its definitions no
// more): declared hidden too, a unit reads the runtime's variables directly, not through the
// global offset table, as it does the variables it defines itself.
#pragma GCC visibility push(hidden)
namespace kc {

extern Thread* cur;               // (cuda_cpu.h) the fiber running now
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;
extern WorkerStatus* my_status;   // this worker's entry of the launch's status array
extern const LaunchDesc* launch;  // the launch this worker runs

// Dynamic shared memory: one buffer as large as a GPU lets a block opt into, so that an
// `extern __shared__` array, rewritten to a reference, binds to a fixed address even at
// namespace scope. Each worker process has its own copy.
constexpr size_t DYNAMIC_SHARED_CAPACITY = 227 * 1024;
extern unsigned char dynamic_smem[DYNAMIC_SHARED_CAPACITY + 4096];

inline size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The block scheduler's state (its protocol: kc_scheduler.cpp).
struct Scheduler {
    Thread* threads = nullptr;
    unsigned nthreads = 0, capacity = 0;
    void* sched_sp = nullptr;
    char* stacks = nullptr;
    size_t slot = 0;                   // bytes per fiber: a guard page, then the stack
    void (*body)(void**) = nullptr;
    void** args = nullptr;
    const uint32_t* order = nullptr;   // linear thread ids in schedule order
    unsigned waiting_warp = 0;         // threads now at a warp operation
    uint64_t progress = 0;             // advanced when a thread gets further (see poll)
    uint32_t named_arrived[16], named_generation[16], named_count[16];   // bar.sync's barriers (kc_ptx.cpp)
    uint32_t barrier_form[16];         // each barrier's thread count this use, plus one (1: none given; 0: no arrival)
    unsigned exited;                   // the block's threads that have exited
    unsigned at_sync;                  // the block's threads now waiting at barrier 0 (state AT_SYNCTHREADS)
    unsigned at_grid;                  // ... of them at grid.sync() (op BARRIER_GRID)
    bool sync_valued;                  // one of them waits at __syncthreads_count, _and or _or this use
    bool named_used;                   // a thread of the block arrived at a barrier other than 0 (kc_ptx.cpp)
};
extern Scheduler sched;

// The scheduler as the launcher drives it: fibers for n threads, once per worker, then one
// block after another, each to completion.
bool reserve_threads(unsigned n, size_t stack_size);
void run_block(const uint32_t* order, uint32_t block, int end_line);
// The running thread has blocked, exited or yielded: the next RUNNABLE thread of the pass runs.
void yield_to_scheduler();
// Barrier 0 completed by bar.sync 0, n and bar.arrive 0, n together (n the whole block): its
// waiting threads released (kc_ptx.cpp); whether it was.
bool release_barrier_zero();
// An arrival at barrier id with thread count `count` (0: none given), which must be the count of
// the arrivals before it in this use of the barrier (kc_ptx.cpp).
void barrier_form(uint32_t id, uint32_t count, const char* what, int line);
// A thread of the block has exited (kc_ptx.cpp): a barrier without a count waits for it no more.
void named_barriers_thread_exit();
// Every live thread waits where __syncthreads() does: with bar.sync 0, n for the whole block and
// threads exited, a report of a block that cannot finish (kc_ptx.cpp).
void barrier_zero_stall(uint32_t block);

// Rule 4 of the scheduler's protocol as a finding: where each thread of the block is (kc_scheduler.cpp).
[[noreturn]] void divergent_barrier(int end_line);

// A cooperative launch (kc_grid.cpp): the grid barrier the workers share, mapped by spawn before the
// fork (0, or -errno) and unmapped in the caller after it; the block's threads all waiting at one
// grid.sync(), which returns once every block of the grid has arrived there; a block that finished.
int grid_launch_start(const LaunchDesc* d);
void grid_launch_end();
void grid_barrier(int end_line);
void grid_block_end(uint32_t block);

// Clusters (kc_cluster.cpp): the group memory a launch's workers share, mapped by spawn before
// the fork (0, or -errno) and unmapped in the caller after it; the blocks a worker runs, `count`
// units (blocks, or clusters) from `first` by `step`, each unit's block, and its end; a turn,
// between two passes of the scheduler.
int cluster_launch_start(const LaunchDesc* d);
void cluster_launch_end();
void cluster_worker_start(const LaunchDesc* d, unsigned w, uint64_t& first, uint64_t& step, uint64_t& count);
uint64_t cluster_block(uint64_t unit);
void cluster_block_end();
void cluster_worker_end();
void cluster_turn();
// A thread of the block has exited: the cluster barrier waits for it no more.
void cluster_thread_exit();
// The cluster barrier's current phase: its arrivals, the cluster's threads that have exited, and
// all of the cluster's threads.
void cluster_barrier_state(uint32_t& arrived, uint32_t& exited, uint32_t& threads);
// An arrival from another block of the cluster (kc_ptx.cpp): no thread of this block's.
void mbarrier_arrive_remote(void* bar, int line);

// One asynchronous copy (cp.async) a thread issued (kc_memory.cpp: async_copy).
struct AsyncCopy {
    char* dst;
    const char* src;
    uint32_t size, zfill;      // bytes written, and of them zero-filled at the end
    uint64_t batch;
    void* pc;                  // the __pipeline_memcpy_async call (checked mode's line)
    int line;
};

// Each thread's queue of the copies it issued (kc_memory.cpp), which lives as the scheduler's
// fibers do: made with them, emptied as each block starts, and completed as its thread exits.
void async_reserve(unsigned n);
void async_block_start(unsigned nthreads);
void async_thread_exit(unsigned thread);

// Every atomic and every volatile read of a thread: a thread that keeps finding one location
// unchanged lets the others of its block run (kc_poll.cpp).
void poll(const volatile void* p, unsigned size, const void* pc, uint64_t key);
// A pass of the scheduler in which threads poll and none got further (kc_poll.cpp).
void stalled_pass(uint32_t block, uint64_t& since, uint64_t& seen);
// The report of such a block when thread t waits at an mbarrier (kc_ptx.cpp).
[[noreturn]] void mbarrier_stall(uint32_t block, const Thread& t);
[[noreturn]] void named_barrier_stall(uint32_t block, const Thread& t);
[[noreturn]] void cluster_stall(uint32_t block, const Thread& t);
// An instruction's offset in the kernel's library, which checked mode's line table maps to a line
// and its inline chain (0: none; kc_poll.cpp).
uint32_t pc_offset(const void* pc);
// In each call of translated inline PTX into the runtime (kc_ptx.h): the running thread's asm_pc
// is the call's return address while it runs (the outermost such call's, where one calls another),
// so that a finding names the asm's place and, through the line table's inline chain, the calls
// of the helpers it sits in (runtime/cudacheck/cpu/findings: calls).
struct AsmCall {
    Thread* t;
    bool outer;
    explicit AsmCall(const void* pc) : t(cur), outer(cur && !cur->asm_pc) { if (outer) t->asm_pc = pc; }
    ~AsmCall() { if (outer) t->asm_pc = nullptr; }
    AsmCall(const AsmCall&) = delete;
    AsmCall& operator=(const AsmCall&) = delete;
};
#define KC_ASM_CALL ::kc::AsmCall kc_asm_call_(__builtin_return_address(0))
// The running thread's asm_pc as an offset (0 outside such a call).
inline uint32_t asm_pc() { return cur ? pc_offset(cur->asm_pc) : 0; }
// The TMA's copy of one 2-D box, or one 2-D slice of a larger box, into shared memory
// (kc_async.cpp), and a multicast of one into the blocks of a mask (kc_cluster.cpp): the box's
// start, which must be 128-byte aligned (tma_box_aligned), checked by the caller, once a box.
void tma_box_aligned(uint64_t at, const char* what, int line);
void tma_copy_in(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, int line);
void tma_multicast_slice(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, uint16_t mask, int line);
// The elements a TMA copy takes along a dimension of a map's box: every (skip + 1)-th
// (CpuTensorMap::skip), ceil(box / (skip + 1)) of them.
inline uint32_t box_taken(uint32_t box, uint8_t skip) { return (box + skip) / (skip + 1u); }
// Whether [p, p + size) lies in the block's shared memory, static or dynamic (kc_ptx.cpp).
bool in_shared(const void* p, size_t size);

// The scope of an atomic or a fence (CUDA's memory model): which threads it orders. The threads of
// a launch all run on one device, so a system scope (atomicAdd_system, __threadfence_system())
// covers what a device scope does; a block scope (atomicAdd_block, __threadfence_block()) covers
// only the threads of its own block.
enum Scope : int { SCOPE_DEVICE = 0, SCOPE_BLOCK = 1, SCOPE_SYSTEM = 2 };
void threadfence_block();   // __threadfence_block() (kc_memory.cpp)

#ifdef KC_CHECKED
// Checked mode's hooks, which the scheduler and the launcher call (kc_check_*.cpp).
// The next atomic_access is of an atomic of this scope (a _block or _system variant, which calls
// the plain atomic), called from `pc`.
void atomic_scope(int scope, void* pc);
void global_fence(int scope);   // a fence by the running thread: __threadfence(), or of the scope named
int global_launch_start(const LaunchDesc* d);                 // in the caller, before the fork
void check_worker_start(const LaunchDesc* d, unsigned w);
void check_block_start(uint32_t block);
// The running thread is about to switch out (kc_scheduler.cpp): its stores held to see their
// value (kc_check_races.cpp) are made, and judged.
void check_thread_yield();
void check_interval_end();                                    // a barrier releases, or the block is done
void check_barrier(int end_line);                             // before a block barrier releases
uint32_t check_grid_interval();                               // the barrier interval a grid.sync() opened here
void check_grid_released(uint32_t interval);                  // ... and the grid's, once every block arrived
void check_warp_group(unsigned warp, unsigned mask, int line);   // before a warp operation releases
void check_warp_released(unsigned w, unsigned mask);          // after a __syncwarp released
void check_collective(unsigned warp, unsigned group);         // before a wmma operation releases
void atomic_access(void* addr, unsigned size, void* pc, bool reads, bool cas = false);
void shared_region(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims, bool dynamic);
void check_async_issue(const AsyncCopy& c);
void check_async_complete(const AsyncCopy& c);
// An mbarrier orders what its arriving threads did before what its waiters do after the phase
// completes (kc_check_races.cpp).
void check_mbarrier_init(const void* bar);
void check_mbarrier_arrive(const void* bar);
void check_mbarrier_complete(const void* bar);
void check_mbarrier_acquire(const void* bar);
void check_mbarrier_warp_sync(unsigned w, unsigned mask);   // a __syncwarp's lanes share what they know
// The async proxy's checks (kc_check_async.cpp): mbarrier phases as threads observe them, the
// TMA's writes and wgmma's and TMA stores' reads of shared memory, wgmma and bulk groups, and
// the threads' proxy fences (fence.proxy.async).
void check_async_block_start();
void check_async_interval_end();
void check_async_init(const void* bar, uint32_t count, int line);
void check_async_expect_tx(const void* bar, int line);
uint32_t check_async_unobserved(const void* bar, unsigned t);
uint32_t check_async_phases(const void* bar);   // phases the barrier completed in this block
const char* barrier_name(const void* bar);     // its shared array and index ("full[1]"), or ""
void check_async_phase_complete(const void* bar);
void check_async_acquire(const void* bar, uint32_t parity, int line);
void check_tma_box(uint64_t dst, const CpuTensorMap* m, int32_t x, int32_t y, int line, const void* ret);
void check_tma_write(uint64_t off, uint32_t size, uint64_t bar, int line);
void check_tma_done(uint64_t bar);
void check_wgmma_begin(const void* ret);
void check_wgmma_operand(uint64_t off, uint32_t size, unsigned wg, int line);
void check_wgmma_commit();
void check_wgmma_accumulators(float* const* d, uint32_t count, int line);
void check_wgmma_wait(uint32_t n);
bool wgmma_in_flight(uint32_t n);
void check_tma_store_read(uint64_t off, uint32_t size, int line);
void check_bulk_commit();
void check_bulk_wait(uint32_t n);
bool bulk_in_flight(uint32_t n);
void check_proxy_fence(int line, bool global_only);
// __syncthreads() released the block: the remote accesses its threads made before it count as the
// block's, for the cluster barrier's next arrival to release (kc_cluster.cpp).
void cluster_block_barrier();
#endif

}  // namespace kc
#pragma GCC visibility pop
