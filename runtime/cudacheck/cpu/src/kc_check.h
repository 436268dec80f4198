// Checked mode: what its units share. g++'s instrumentation (-fsanitize=thread for every load
// and store of the kernel, -fsanitize=bounds for every subscript of an array of known size)
// calls hooks that checked mode implements itself; the sanitizers' own libraries are never
// linked. The kernel is compiled with its own types; nothing it computes changes.
//
// One unit per role, as compute-sanitizer separates its tools, each compiled once with
// -DKC_CHECKED and linked beside the runtime's units (runtime/cudacheck/cpu/compiler.py):
//   kc_check_core.cpp          the state below, the regions (where each array is), the hooks
//                              the scheduler calls as a worker, a block and an interval start
//                              and end, and the order in which held findings are reported
//   kc_check_access.cpp        the instrumentation's entry points: every access is found its
//                              region and handed to each check (on_access), counted and traced
//   kc_check_bounds.cpp        out-of-bounds accesses and subscripts (memcheck)
//   kc_check_races.cpp         races on shared memory, asynchronous copies included (racecheck)
//   kc_check_global_races.cpp  races on global memory, between any two threads of a launch
//   kc_check_sync.cpp          divergent barriers, warp masks and warp-collective operations
//                              (synccheck)
//   kc_check_init.cpp          reads of memory nothing has written (initcheck)
//   kc_check_async.cpp         the async proxy (inline PTX): TMA tiles read before their mbarrier
//                              phase completes, wgmma operands overwritten while it reads them,
//                              a TMA store's source overwritten before its bulk group is waited for,
//                              threads' stores the async proxy reads with no fence.proxy.async between
//
// Provenance. Every array argument lives alone in a slot of 2^slot_shift bytes of address
// space (runtime/cudacheck/cpu/system.py), at the slot's middle, with nothing else mapped in
// it; so the slot an address falls in names the array it was derived from, however it was
// computed (pointer arithmetic, casts, helpers, structs), and an index past either end is
// reported against that array. Shared variables register as each thread passes their
// declaration (shared_register); dynamic shared memory is one buffer; __device__
// variables are one section.
//
// Which finding is reported. An out-of-bounds access ends the run at once. A race or an
// uninitialized read is held (the first of each) until the barrier interval ends, because
// a divergent barrier, found only then, is often its cause. So at the end of an interval
// the report is, in order: a divergent barrier, the first race, the first uninitialized read.
// Every finding is written as JSON (kc_findings.def) into the worker's status, and the
// worker ends; runtime/cudacheck/cpu/findings/ turns it into the matching Python exception.
#pragma once
#include "kc_runtime.h"

#pragma GCC visibility push(hidden)   // the library's own, as in kc_runtime.h
namespace kc {

// ---- the shadow of shared memory (kc_check_races.cpp, kc_check_init.cpp) ---------------
// Every shared element has one: its last write and up to two reads, each with the thread,
// the barrier interval (`epoch`, advanced when a __syncthreads() releases the block), the
// warp's __syncwarp count, where it is (pc) and the thread's position in its own interval.
struct AccessRec {
    uint32_t epoch;   // barrier interval of the access; 0: none
    uint16_t tid;
    uint16_t wepoch;  // the warp's __syncwarp count at the access
    uint32_t pc;
    uint32_t seq;
    uint8_t atomic;
    uint8_t collective;   // made by a wmma load or store, on behalf of the whole warp
    uint8_t async_proxy;  // a write by the async proxy (a TMA copy), which the async proxy reads
                          // with no proxy fence (kc_check_async.cpp: proxy fences)
};
// pend: an asynchronous copy (cp.async) into the element is in flight, issued by thread
// `tid` at `pc`: any access before it completes is a race (check_async_issue).
struct Shadow { AccessRec w, r1, r2; struct { uint32_t pc; uint16_t tid; uint8_t set; } pend; };

// ---- regions: the memory checked mode knows, each with its name and shape ---------------
enum RegionKind : uint8_t { PARAM, SHARED, DYNAMIC, DEVICE, LOCAL };
struct GMem;   // a global memory's shadow (kc_check_global_races.cpp)
struct Region {
    const char* name;
    char* base;
    uint64_t bytes;
    int32_t id;            // parameter index, or SHARED_ID_BASE + shared id; -1 for device variables
    uint8_t kind;
    uint32_t elem_size;    // the declared element's size: the shadow's granule, the unit of indices
    Shadow* shadow;        // shared: one per element
    uint64_t shadow_len;
    uint32_t ndim;
    uint32_t dims[4];
    Region* next;          // the next view sharing a slot (overlapping arguments)
    uint32_t granule;      // shared: bytes per shadow entry (0: elem_size); a struct's is its alignment,
                           // so that threads writing different fields of one struct do not race
    uint8_t* init;         // a whole program's allocation: which bytes were ever written (else null)
    GMem* gm;              // global memory: its race shadow (null: not checked for races)
    uint64_t lead, span;   // a parameter that is a view into a larger allocation: the allocation's bytes
                           // before base, and from base to its end (0, 0: the region is the allocation)
    mutable bool generic_written;   // shared: an ordinary store (the generic proxy) wrote it in this launch;
                                    // until one does, the async proxy's reads have no proxy fence to look for
};

// Whether an access of `size` bytes at byte offset off of region r lies outside r's allocation
// (a kernel given a view may read before the view's start, as NVIDIA's stencil reads in[-3]).
inline bool outside_allocation(const Region* r, int64_t off, unsigned size) {
    return off < -int64_t(r->lead) || off + int64_t(size) > int64_t(r->span ? r->span : r->bytes);
}

enum Op : uint8_t { READ = 0, WRITE = 1 };

// One worker's checked-mode state (defined in kc_check_core.cpp).
struct CheckState {
    CheckDesc* desc = nullptr;
    uint64_t* counts = nullptr;
    uint32_t epoch = 1;
    int interval_line = 0;
    uint16_t warp_epoch[32] = {};
    bool tracing = false;
    TraceRecord* trace = nullptr;
    uint64_t* trace_count = nullptr;
    uintptr_t lib_base = 0;           // pcs are reported as offsets into the library
    // where arrays are
    uintptr_t slot_lo = 0, slot_span = 0;
    Region params[MAX_PARAMS];
    Region* slots[MAX_SLOTS] = {};
    Region shared[MAX_SHARED_ARRAYS];
    Region* static_shared[MAX_SHARED_ARRAYS] = {};   // registered this launch, by address
    int nstatic = 0;
    uintptr_t shared_lo = ~uintptr_t(0), shared_hi = 0;
    Region* dynamic = nullptr;
    Region device[256];
    int ndevice = 0;
    uintptr_t device_lo = 0, device_hi = 0;
    // findings held until the interval ends
    struct { bool set; const Region* r; uint64_t elem; uint16_t tid; uint32_t pc; } pending{};   // initcheck
    char pending_race[1024] = {};     // racecheck, shared or global memory
    const char* via = nullptr;        // an out-of-bounds access made by a wmma call: which, for the message
    bool collective = false;          // the access now accounted is a wmma load's or store's
    bool async_write = false;         // the write now accounted is a TMA copy's (the async proxy's)
    bool cas = false;                 // the access now accounted is an atomicCAS
    int scope = SCOPE_DEVICE;         // ... and its scope (an atomic's: atomic_scope)
    // a subscript the bounds instrumentation found outside its dimension, reported at the
    // access it leads to (or dropped at the thread's next barrier: forming &a[n] is legal)
    struct { bool set; uint32_t thread; uint32_t line; int64_t index; uint64_t bound; int rank; } sub{};
};
extern CheckState chk;

inline uint32_t pc_of(const void* pc) { return uint32_t(reinterpret_cast<uintptr_t>(pc) - chk.lib_base - 1); }

inline bool is_shared(const Region* r) { return r && (r->kind == SHARED || r->kind == DYNAMIC); }

// The element of shared region r that shadow entry `granule_index` belongs to.
inline uint64_t element_of(const Region* r, uint64_t granule_index) {
    return r->granule ? granule_index * r->granule / r->elem_size : granule_index;
}

// The section of static __shared__ arrays and the guard after it (kc_device.ld).
extern "C" char __start_kc_shared[] __attribute__((weak));
extern "C" char __stop_kc_shared[] __attribute__((weak));
inline uintptr_t kc_shared_lo() { return reinterpret_cast<uintptr_t>(__start_kc_shared); }
inline uintptr_t kc_shared_span() {   // the section ends with its 4096-byte guard
    return __start_kc_shared ? uintptr_t(__stop_kc_shared - __start_kc_shared) : 0;
}

// ---- kc_check_core.cpp -------------------------------------------------------------------
// A finding, as JSON: into the worker's status, and the worker ends.
[[noreturn]] void report(const char* json);
// An element's indices and an array's dimensions, as JSON arrays.
int index_json(char* out, size_t n, const Region* r, uint64_t elem);
int dims_json(char* out, size_t n, const Region* r);
// The region an address lies in, or the nearest below it (static shared arrays, __device__ variables).
Region* find_static_shared(uintptr_t a);
Region* find_device(uintptr_t a);
// The region an address lies in, as on_access finds it; null for memory checked mode does not
// check (a thread's stack). Reports a null or unmapped pointer.
Region* region_at(const void* p, unsigned size, uint32_t pc, Op op);

// ---- kc_check_access.cpp -----------------------------------------------------------------
// Every load and store of the kernel, checked and accounted: `ret` is where the access is.
void on_access(const void* p, unsigned size, const void* ret, Op op, bool atomic = false, bool atomic_reads = false,
               bool is_volatile = false);

// ---- kc_check_bounds.cpp -----------------------------------------------------------------
[[noreturn]] void out_of_bounds(const Region* r, const char* index, const char* dims, unsigned elem_size, uint32_t pc,
                                uint32_t line, const char* what);
// An access of `size` bytes at byte offset off (may be negative) outside region r.
[[noreturn]] void outside(const Region* r, int64_t off, unsigned size, uint32_t pc, const char* what,
                          uint32_t line = 0);
// A subscript found outside its dimension, now met by the access it leads to (in `r`, or in
// a thread's local memory when r is null).
[[noreturn]] void bad_subscript(const Region* r, uintptr_t a, unsigned size, uint32_t pc, Op op);
// The static shared array a bad subscript was taken of, or null.
Region* subscripted(uintptr_t a);

// ---- kc_check_races.cpp ------------------------------------------------------------------
// One shared element's access against its history (probe: check without recording it).
void shared_element(const Region* r, uint64_t elem, uint32_t pc, Op op, bool atomic, bool atomic_reads,
                    bool probe = false);
// The clocks of the block's barriers (named barriers, mbarriers, __syncwarp), in this interval:
// whether thread u's access at position seq is ordered before thread t's next; thread t's
// clock copied into out (nthreads entries), and whether it orders any other thread's access.
bool clock_orders(unsigned u, uint32_t seq, unsigned t);
bool clock_copy(unsigned t, uint32_t* out);
// Whether access (or fence) a, of this block, is ordered before thread t's next one: as a race
// check orders two accesses (an older interval, a __syncwarp of its warp, the barriers' clocks,
// or t's own program order).
bool orders_before(const AccessRec& a, unsigned t);
// Whether the `size` bytes at a equal `old` (to = true: copies them into `old` instead), byte by
// byte: a same-value store's test, on global memory and shared (kc_check_global_races.cpp).
bool same_bytes(uint8_t* old, uintptr_t a, unsigned size, bool to = false);
// A block starts: no store is held to see its value.
void check_held_block_start();

// ---- kc_check_async.cpp ------------------------------------------------------------------
// A thread's load or store of shared memory against what the async proxy does to it.
void check_async_access(const void* p, unsigned size, uint32_t pc, Op op);
// A thread's access to its own stack while wgmma accumulators are pending (accumulators_pending:
// how many records, of any thread): a read or write of one before its wait_group is a finding.
extern uint32_t accumulators_pending;
void check_accumulator_access(uintptr_t a, unsigned size, uint32_t pc, Op op);

// ---- kc_check_global_races.cpp -----------------------------------------------------------
void global_worker_start(const CheckDesc* c, Region* const* regions, int nregions);
void global_block_start(uint32_t block);
void global_interval_end();
// Thread t arrives on a barrier of the block, or its clock is about to take in one's
// (kc_check_races.cpp): its held reads are checked, its strong read acquired, and its position
// moved past its last global access.
void global_sync(unsigned t);
void global_memory(const Region* r, uintptr_t a, unsigned size, uint32_t pc, bool reads, bool writes, bool strong,
                   bool atomic);

// ---- kc_check_init.cpp -------------------------------------------------------------------
// A whole program's device memory: a read of bytes never written is reported; a write marks them.
void global_init(const Region* r, int64_t off, unsigned size, uint32_t pc, bool reads, bool writes);
// A read of a shared element no thread of the block has written: held (the first) until the interval ends.
void hold_uninit(const Region* r, uint64_t elem, uint16_t tid, uint32_t pc);
// The interval ends: a shared read still held (chk.pending) is an uninitialized read.
void report_pending_uninit();

}  // namespace kc
#pragma GCC visibility pop
