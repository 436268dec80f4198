// Inline PTX on the CPU runtime: what the front end's translation of an asm statement calls
// (runtime/cudacheck/frontend/ptx.py says which instructions it translates, and why those),
// and the built-ins that make a shared address: the shared window, the mbarrier object
// (kc_ptx.cpp), elect.sync and the proxy fences. Every call carries the instruction's line.
#pragma once

namespace kc {

// ---- the shared window ----------------------------------------------------------------
// A shared address is an offset in the block's shared memory, as a GPU's 32-bit shared
// window has it (cvta.to.shared, __cvta_generic_to_shared); shared_address maps one back.
uint64_t shared_offset(const void* p);
void* shared_address(uint64_t offset);

// ---- the mbarrier object (PTX ISA: mbarrier) -------------------------------------------
// It lives in the 8 bytes of shared memory the kernel reserves for it (kc_ptx.cpp packs its
// state there). A phase completes when its pending arrivals and its transaction count both
// reach zero; the barrier then flips its phase parity and expects its count of arrivals again.
// A misuse a GPU leaves undefined (a count out of range, more arrivals than a phase expects, an
// address outside shared memory or not 8-byte aligned) is reported as an InvalidOperandError.
void mbarrier_init(void* bar, uint32_t count, int line);
// expect-tx of `tx` bytes (arrive.expect_tx), then the arrival of `count` threads; returns the
// state of the phase arrived on (its parity), for try_wait and test_wait.
uint64_t mbarrier_arrive(void* bar, uint32_t count, uint32_t tx, int line);
void mbarrier_expect_tx(void* bar, uint32_t tx, int line);
void mbarrier_complete_tx(void* bar, uint32_t tx, int line);
// try_wait and test_wait: whether the phase of this parity has completed (the current phase has
// the other parity). If not, the thread lets the others of its block run first, as a GPU's
// try_wait suspends it, and answers for the barrier as it finds it then: a loop of waits
// lets the producers arrive. A wait that nothing can complete is a ForwardProgressError.
bool mbarrier_wait(void* bar, uint32_t parity, int line);

// ---- elect.sync: the lowest lane of `mask` that reaches it, once all of them have ------------
// (A caller outside its own mask, undefined in PTX, gets lane 31 rather than a count of zeros.)
inline uint32_t elect_sync(uint32_t mask, int line) {
    return uint32_t(__builtin_ctz(uint32_t(warp_op(BALLOT, mask, 1, 0, 32, line)) | 0x80000000u));
}

// ---- proxy fences ------------------------------------------------------------------------------
// Between the generic proxy (the kernel's own loads and stores) and the async proxy (TMA, wgmma)
// and after initialising mbarriers: nothing here performs memory operations behind the
// kernel's back, so they order only what the compiler may move. fence.proxy.async is a call
// of the runtime (kc_async.cpp), where checked mode records it: a thread's stores the async
// proxy reads need one of their writer's between (kc_check_async.cpp). `space`: the state space
// the fence orders, from its qualifier (none: all; .shared::cta or .shared::cluster; .global):
// only one that orders shared memory stands between a thread's st.shared and the async proxy.
enum ProxySpace : int { PROXY_ALL, PROXY_SHARED, PROXY_GLOBAL };
void fence_proxy_async(int line, ProxySpace space);
inline void fence_mbarrier_init(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// ---- the async proxy (kc_async.cpp), performed at once --------------------------------------
// cp.async.bulk.tensor.2d, global to shared: the box of tensor map `map` (kc_abi.h: CpuTensorMap)
// whose corner is column x, row y, into shared memory at dst (a window offset, 128-byte
// aligned), laid out by the map's swizzle, elements outside the matrix written as zeros (or
// NaN); then its bytes, the whole box's, complete on the mbarrier at bar.
void tma_load_2d(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, int line);
// An immediate of an instruction given as an "n" operand (frontend/ptx_async.py: imm-scale,
// imm-trans): a constant g++ checks, as ptxas refuses any value outside those the instruction takes.
template <int64_t V, int64_t... Allowed>
constexpr int ptx_immediate() {
    static_assert(((V == Allowed) || ...), "an \"n\" operand of inline PTX outside the values the instruction takes "
                                           "(wgmma: imm-scale-a/b 1 or -1, imm-trans-a/b 0 or 1)");
    return int(V);
}
// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16} and m64nNk8.f32.tf32: d holds the
// addresses of this thread's N/2 accumulators; type 0 is bf16, 1 f16, 2 tf32 (no transposes:
// trans_a and trans_b 0). `a` is null where A is read through desc_a (the SS form), or this
// thread's four A registers (the RS form: desc_a and trans_a unused, 0). It returns when the
// whole warpgroup has arrived and the product is in every thread's accumulators. `own`: d
// holds the addresses of the source's own variables ("+f" operands, bound by reference), which
// checked mode watches until a wait_group retires the wgmma (kc_check_async.cpp).
void wgmma_mma(float* const* d, uint32_t n, uint64_t desc_a, const uint32_t* a, uint64_t desc_b, bool scale_d,
               int32_t scale_a, int32_t scale_b, uint32_t trans_a, uint32_t trans_b, uint32_t type, bool own,
               int line);
// A wgmma accumulator ("+f" operand) as the translation binds it: the variable itself, which must
// be a float (as ptxas takes an "f" register).
inline float& accumulator(float& r) { return r; }
// The wgmma's fence, commit and wait: with the products computed at the mma, ordering points for
// the compiler; commit and wait (kc_async.cpp) also count groups, for checked mode's check of
// stores to operands a group still reads.
inline void wgmma_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
void wgmma_commit(int line);
void wgmma_wait(uint32_t n, int line);
// cp.async.bulk.tensor.2d, shared to global (.bulk_group): the box of `map` whose corner is
// column x, row y, from shared memory at src (laid out by the map's swizzle); only the elements
// inside the matrix are written. Performed at once, so the bulk groups' commit and wait (.read
// or not) have nothing left to wait for: ordering points for the compiler; they also count each
// thread's bulk groups (kc_async.cpp), for checked mode's check of writes into a store's source
// before its group is waited for.
void tma_store_2d(const void* map, int32_t x, int32_t y, uint64_t src, int line);
// cp.async.bulk.tensor.{1..5}d, loads (also multicast) and stores: the box whose corner is c[0..n)
// (c[0] the column, c[1] the row, c[2..] dimensions 2-4 of a map of rank 3-5), as the 2-D calls
// above of each of its 2-D slices (kc_async.cpp: for_each_slice).
void tma_load_nd(uint64_t dst, const void* map, const int32_t* c, int n, uint64_t bar, int line);
void tma_load_multicast_nd(uint64_t dst, const void* map, const int32_t* c, int n, uint64_t bar, uint16_t mask,
                           int line);
void tma_store_nd(const void* map, const int32_t* c, int n, uint64_t src, int line);
void bulk_commit(int line);
void bulk_wait(uint32_t n, int line);

// ---- ldmatrix.sync.aligned.m8n8: the fragments of the rows the lanes read ---------------------
// ldmatrix.sync.aligned.m8n8: lane l has read row l % 8 of matrix l / 8 (`row`, 16 bytes; zeros for a
// lane past the matrices); thread t's register i gets elements (t / 4, 2 (t % 4)) and the next of
// matrix i, or with .trans those of its transpose. Every lane of the warp takes part (shuffles).
inline unsigned matrix_row_lane() { return cur->linear % 32; }
inline void ldmatrix_fragments(const uint32_t* row, int count, bool trans, uint32_t* m, int line) {
    const unsigned t = matrix_row_lane(), r = t / 4, c = 2 * (t % 4);
    for (int i = 0; i < count; ++i) {
        uint32_t halves[2] = {};
        for (unsigned h = 0; h < (trans ? 2u : 1u); ++h)
            for (unsigned w = 0; w < 4; ++w) {
                // element (r, c + h) is stored (row r, word c / 2) or, transposed, (row c + h, half r)
                const unsigned from = 8 * i + (trans ? c + h : r);
                const uint32_t v = shfl(SHFL_IDX, 0xffffffffu, row[w], line, int(from));
                if (!trans && w == c / 2) halves[0] = v;
                if (trans && w == r / 2) halves[h] = (v >> (16 * (r % 2))) & 0xffffu;
            }
        m[i] = trans ? halves[0] | halves[1] << 16 : halves[0];
    }
}

// ---- stmatrix.sync.aligned.m8n8: the row this lane stores --------------------------------------
// Element (r, c) of 8 x 8 matrix i is half c % 2 of register i of lane 4 r + c / 2 (the PTX ISA's
// fragment layout); lane l stores row l % 8 of matrix l / 8, or with .trans column l % 8 of it.
// Every lane of the warp takes part (shuffles); a lane whose matrix is past `count` stores nothing.
inline bool stmatrix_row(const uint32_t* m, int count, bool trans, uint32_t* row, int line) {
    const unsigned lane = matrix_row_lane(), mine = lane / 8, j = lane % 8;
    uint16_t halves[8] = {};
    for (int i = 0; i < count; ++i)
        for (unsigned k = 0; k < 8; ++k) {
            const unsigned r = trans ? k : j, c = trans ? j : k;
            const uint32_t v = shfl(SHFL_IDX, 0xffffffffu, m[i], line, int(4 * r + c / 2));
            if (mine == unsigned(i)) halves[k] = uint16_t(c % 2 ? v >> 16 : v);
        }
    __builtin_memcpy(row, halves, sizeof halves);
    return mine < unsigned(count);
}

// ---- named barriers: bar.sync / barrier.sync id, count (kc_ptx.cpp) ---------------------------
// `count` threads (a multiple of 32; all of the block's when omitted) meet at barrier id (0-15).
void named_barrier(uint32_t id, uint32_t count, int line);
// bar.arrive / barrier.arrive id, count: an arrival at barrier id that does not wait (a producer's
// signal to threads that wait there with bar.sync, or at barrier 0 with __syncthreads()).
void named_barrier_arrive(uint32_t id, uint32_t count, int line);

// ---- clusters (kc_cluster.cpp) -----------------------------------------------------------------
// The special registers of the block's cluster (a launch without clusters: a cluster of one).
enum ClusterRegister { CLUSTER_CTARANK, CLUSTER_NCTARANK, CLUSTER_ID, CLUSTER_NID, CLUSTER_CTAID, CLUSTER_NCTAID,
                       CLUSTER_EXPLICIT };
uint32_t cluster_register(ClusterRegister which, int axis);
// mapa.shared::cluster: the shared::cluster address of `address` in the block of rank `rank` of
// the cluster (a rank outside it is an InvalidOperandError).
uint64_t mapa(uint64_t address, uint32_t rank, int line);
// A shared::cluster address as this block's window offset; one of another block's is an
// InvalidOperandError (the CPU runtime reaches another block only by the two calls below).
uint64_t cluster_local(uint64_t address, const char* what, int line);
// mbarrier.arrive.shared::cluster: on this block's barrier, or on another's, as PTX's remote
// arrival (its state is the sink `_`: 0).
uint64_t mbarrier_arrive_cluster(uint64_t address, uint32_t count, int line);
// cp.async.bulk.tensor.2d ... .multicast::cluster: tma_load_2d into every block of the cluster whose
// rank's bit is set in `mask`, at the same offsets dst and bar in each.
void tma_load_multicast(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, uint16_t mask, int line);
// barrier.cluster.arrive and .wait: every thread of every block of the cluster.
void cluster_arrive(int line);
void cluster_wait(int line);

}  // namespace kc

inline size_t __cvta_generic_to_shared(const void* p) { return size_t(::kc::shared_offset(p)); }
inline void* __cvta_shared_to_generic(size_t a) { return ::kc::shared_address(a); }
