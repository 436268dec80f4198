// What <mma.h> and <cuda_pipeline.h> need from the runtime (kc_runtime.h): warp-collective
// operations and asynchronous copies. Only those two headers include it, so a kernel that
// uses neither compiles none of it.
#pragma once
#include "../include/cuda_cpu.h"

namespace kc {

// Where a call is in the kernel's source: a hidden last parameter of the runtime's
// warp-matrix functions, `kc::Site site = kc::Site::here()`, which g++ evaluates at the
// caller's line (as std::source_location::current() does). A class, so that no argument of
// the caller's converts to it by mistake.
struct Site {
    int line;
    static Site here(int line = __builtin_LINE()) { return Site(line); }
private:
    explicit Site(int l) : line(l) {}
};

// A warp-collective operation (a wmma load, store or mma): every lane of the warp calls
// warp_collective() with its own Collective, on its own stack; when all 32 lanes have
// arrived at the same one, the scheduler calls run(lanes, lane) for each lane in turn, with
// `cur` that lane's thread, and lanes[l] the Collective of lane l. Until then no lane runs,
// so every lane's operands (its fragments) are intact while any lane's part is computed.
// Protocol and checks: kc_scheduler.cpp (release_complete_warps), kc_check_sync.cpp (check_collective).
struct Collective;
using CollectiveRun = void (*)(Collective* const* lanes, unsigned lane);
struct Collective {
    CollectiveRun run;
    const char* what;          // "wmma::load_matrix_sync", for messages
    uint64_t key[3];           // what every lane must pass alike: pointer, ldm, layout
    void* pc;                  // the call in the kernel: checked mode's line of each access
    int line;                  // the call's source line
    void* operand[4];          // the fragments: d (or the one loaded, stored, filled), a, b, c
};

// Returns whether the operation was performed: all 32 lanes of the warp arrived at this one
// call. Otherwise (a lane exited, or waits elsewhere) no lane's part is performed, in plain
// mode, and checked mode reports a WarpCollectiveError.
bool warp_collective(Collective* c);

// A call's argument that CUDA forbids (a misaligned pointer, a bad leading dimension or copy
// size): reported as the matching error (cpu/findings/) and the worker ends. `problem` names the
// rule; `value` is what was passed, `need` what the rule requires.
[[noreturn]] void operand_error(const char* problem, const char* what, const void* ptr, uint64_t value,
                                uint64_t need, int line);

// Asynchronous copies (cp.async) of one thread: issued, committed in batches, completed at
// __pipeline_wait_prior. kc_memory.cpp performs a copy when its thread waits for it (or
// exits), never before: a kernel that reads the destination too early sees what a GPU may
// show it, the old contents; checked mode reports the read.
void async_copy(void* dst, const void* src, size_t size, size_t zfill, void* pc, int line);
void async_commit();
void async_wait_prior(size_t n);

#ifdef KC_CHECKED
// Checked mode: one element access of collective c (a wmma load or store) by the lane now
// running, at `addr`: it must lie in the array the tile's pointer (c->key[0]) points into,
// global or shared, and is accounted (counts, races, traces) as the kernel's own accesses
// are, at the call's line. The element is (row, col) of a rows x cols tile: for the message.
void tile_access(const Collective* c, const void* addr, unsigned size, bool write, int rows, int cols, int row,
                 int col);
#endif

}  // namespace kc
