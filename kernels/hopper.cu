// Hopper: the tiled product once more, where the lecture's four steps become hardware.
// P (m x n, float) = M (m x k) times N (k x n), all row-major as in tensor_cores.cu, every
// product accumulated in float; M and N in 16-bit floats for the first five kernels:
//   (default)      __nv_bfloat16 inputs
//   -DHOPPER_FP16  __half inputs
// and in float for matmul_tf32, which multiplies them in TF32.
// Compile for sm_90a (NVRTC or nvcc: -arch=sm_90a -std=c++17): the warpgroup multiply
// (wgmma) and the register hand-over (setmaxnreg) exist only on that target, not on plain
// sm_90, and nothing here runs on an earlier GPU: the tensor memory accelerator (TMA),
// mbarrier transaction counts and wgmma came with compute capability 9.0. None of these
// kernels runs on Colab's T4 (compute capability 7.5), whose tensor cores the wmma kernels
// of tensor_cores.cu reach; the book's numbers for this file come from an H100 and an H200.
// The lecture's tiled kernel in its steps, and what each becomes here:
//   1. allocate the tiles: STAGES slots of dynamic shared memory, each holding a BM x BK
//      tile of M and a BK x BN tile of N, laid out (swizzled) as the TMA writes them and as
//      wgmma reads them, so that no step rearranges them in between;
//   2. the indices this thread is responsible for, and the number of tiles: each block still
//      finds its tile's corner and the number of slices of k. The indices of the elements a
//      thread loads in step 3a leave the kernel: a tensor map, built once on the host
//      (cudacheck.tensor_map_2d), holds the matrix's address, its sizes, its row pitch and
//      the box's shape, a load names only the box's corner (column, row), and the TMA
//      computes every address and writes zeros wherever the box reaches past the matrix (so
//      no load needs a guard, and neither m, n nor k need be a multiple of a tile). The
//      indices of the results stay: a thread's warp and lane fix which rows and columns of
//      the tile its accumulators hold (store_tile, and step 4);
//   3a. load, then wait: one thread issues the copy (cp.async.bulk.tensor) and announces its
//      bytes (expect_tx) on the slot's full mbarrier; the TMA moves the whole box while the
//      other threads are free, and the barrier completes its phase when its one expected
//      arrival has come and all the announced bytes have landed: a wait on it replaces the
//      first __syncthreads;
//   3b. multiply, then wait: a warpgroup (4 warps, 128 threads) multiplies the tiles straight
//      from shared memory (wgmma.mma_async, 64 x BN x 16 per instruction, accumulators in
//      registers; matmul_tf32 first reads one tile into registers), asynchronously;
//      wgmma.wait_group waits for the products, and then the slot goes back to the loads:
//      by a __syncthreads in matmul_tma_wgmma, by arrivals on the slot's empty mbarrier in
//      the other kernels, which replace the second __syncthreads. An mbarrier counts
//      arrivals, not threads: one per consumer warp, so the barrier counts 8 arrivals from
//      a block's 256 consumer threads (16 from the two blocks of a cluster);
//   4. write the result where it lies inside P: each thread stores its accumulators, guarded
//      by row and column (store_tile); matmul_async_store instead writes them to shared
//      memory and one thread issues a TMA store (cp.async.bulk.tensor, shared to global),
//      which leaves out the parts of a box past P's edges.
// Six kernels, each a step from the one before, selected by name:
//   matmul_tma_wgmma          one warpgroup, 128 threads, per block, computing a 64 x K1_BN
//                             tile of P (K1_BN = 128 by default, or 64 or 256); K1_STAGES
//                             slots (4) are loaded ahead by thread 0, and the warpgroup
//                             waits for each slice's products before its slot is reloaded.
//                             Dynamic shared memory: K1_STAGES * (8,192 + 128 * K1_BN) +
//                             1,024 bytes (99,328 at the defaults: two blocks per SM).
//   matmul_warp_specialized   three warpgroups, 384 threads: a producer (warpgroup 0, one
//                             thread of which issues every load) and two consumers, each
//                             computing WS_WG_M rows (64, or 128) of a (2 * WS_WG_M) x WS_BN
//                             tile of P (128 x 256 by default), with full and empty
//                             mbarriers per slot and one group of products kept in flight.
//                             The producer gives registers back (setmaxnreg.dec) and the
//                             consumers take them (setmaxnreg.inc). Dynamic shared memory:
//                             WS_STAGES * (256 * WS_WG_M + 128 * WS_BN) + 1,024 bytes
//                             (197,632 at the defaults, WS_STAGES = 4: one block per SM).
//   matmul_persistent         the same blocks, at most one per SM (the grid: as few blocks as
//                             take the tiles in as few rounds as the SMs would), each
//                             walking tiles of P in a grouped order (GROUP_M rows of
//                             tiles at a time, so that blocks running together share tiles
//                             of M and N in L2); the producer loads the next tile's slices
//                             while the consumers store the last one.
//   matmul_clustered          the persistent blocks in clusters of two (CLUSTER), on two
//                             tiles one above the other (rows 2i and 2i + 1 of tiles, the
//                             same column): the tile of N they share is read from L2 once
//                             and multicast into both blocks' slots, each block's producer
//                             loading half of its boxes; a slot is free again when the
//                             consumers of both blocks are done with it (empty counts 16
//                             arrivals, 8 of them from the other block). CL_STAGES slots
//                             (WS_STAGES, 4), tiles walked in groups of CL_GROUP_M pairs.
//                             Dynamic shared memory: as matmul_persistent's (197,632).
//   matmul_async_store        matmul_clustered whose results leave through shared memory:
//                             each consumer writes its tile, 64 rows x 32 columns at a
//                             time, into one of EPI_BUFS buffers (2) of 8,192 bytes, and the
//                             TMA stores it (cp.async.bulk.tensor, shared to global) while
//                             the consumer fills the next buffer; the last EPI_DEFER (5) of
//                             a consumer's 8 boxes are held in registers and sent one by one
//                             while the next tile's first slices multiply. Dynamic shared memory:
//                             CL_STAGES * 49,152 + 2 * EPI_BUFS * 8,192 + 1,024 bytes
//                             (230,400 at the defaults).
//   matmul_tf32               matmul_persistent for float inputs, in TF32: P^T = N^T M^T,
//                             the tile of N read into registers (wgmma's A), that of M
//                             from shared memory (its B), on 256 x 128 tiles of P (TF_BM x
//                             TF_BN), slices of 32 floats, TF_STAGES slots (4). Dynamic
//                             shared memory: TF_STAGES * 49,152 + 1,024 bytes (197,632).
// The launches: matmul_tma_wgmma, 128 threads in a grid of ceil(n/K1_BN) x ceil(m/64);
// matmul_warp_specialized, 384 threads in a grid of ceil(n/WS_BN) x ceil(m/(2*WS_WG_M));
// matmul_persistent and matmul_tf32, 384 threads in a grid of W(tiles, SMs) blocks;
// matmul_clustered and matmul_async_store, 384 threads in a grid of 2 x W(pairs of tiles,
// clusters that fit at once) blocks, where pairs = ceil(ceil(m/BM)/2) x ceil(n/BN) (the grid
// is a whole number of clusters; __cluster_dims__ makes an ordinary launch a clustered one).
// W(units, at once) = ceil(units / ceil(units / at once)): the fewest blocks (or clusters)
// that take the units in as few rounds as `at once` would, so that every block walks the
// same number of them (tiling_course.hopper.whole_waves). Each launch has the dynamic
// shared memory its *_config array gives. The arguments: the tensor maps of M and N (128 bytes
// each, passed by value), then P, m, k, n; matmul_async_store takes a third tensor map, of P
// (float, boxes of 32 columns by 64 rows, the 128-byte swizzle: matmul_async_store_box), in
// place of P. The tensor map of M has boxes of 64 columns by BM rows,
// that of N boxes of 64 columns by 64 rows, both with the 128-byte swizzle (for
// matmul_tf32, of floats: 32 columns by BM rows, and 32 by 32); a tensor map
// needs every row of its matrix to start at a multiple of 16 bytes (k and n multiples of 8
// for 16-bit elements, of 4 for floats, or a padded row pitch: cudacheck.pad_rows).
// Each kernel's *_config array (a __constant__ the host reads with get_global) holds what
// a launch needs: {threads per block, BM, BN, dynamic shared memory bytes, stages}.

// ---- Sizes -------------------------------------------------------------------------------
#if defined(HOPPER_FP16)
#define WG_TYPES "f16.f16"                      // the wgmma's A and B types
#else
#define WG_TYPES "bf16.bf16"
#endif
#define BK 64                                   // k per slice: 64 16-bit values, 128 bytes
#define ROW_BYTES 128                           // a row of a slice: the 128-byte swizzle's span
#define CHUNK 64                                // columns of N per TMA box (128 bytes of a row)
#define CHUNK_BYTES (BK * ROW_BYTES)            // a 64 x 64 box of N: 8,192 bytes
#define SMEM_LIMIT 232448                       // the most dynamic shared memory a block may opt into

#ifndef K1_BN
#define K1_BN 128
#endif
#ifndef K1_STAGES
#define K1_STAGES 4
#endif
#define K1_BM 64
#define K1_A_BYTES (K1_BM * ROW_BYTES)
#define K1_STAGE_BYTES (K1_A_BYTES + K1_BN * ROW_BYTES)
#define K1_SMEM (K1_STAGES * K1_STAGE_BYTES + 1024)

#ifndef WS_BN
#define WS_BN 256
#endif
#ifndef WS_WG_M
#define WS_WG_M 64                              // rows of P per consumer warpgroup
#endif
#ifndef WS_STAGES
#define WS_STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8                               // rows of tiles per group (matmul_persistent)
#endif
#ifndef PRODUCER_REGS
#define PRODUCER_REGS 40
#endif
#ifndef CONSUMER_REGS
#define CONSUMER_REGS 232
#endif
#define WS_CONSUMERS 2
#define WS_THREADS (128 * (WS_CONSUMERS + 1))
#define WS_BM (WS_CONSUMERS * WS_WG_M)
#define WS_MT (WS_WG_M / 64)                    // 64-row wgmma blocks per consumer
#define WS_A_BYTES (WS_BM * ROW_BYTES)
#define WS_STAGE_BYTES (WS_A_BYTES + WS_BN * ROW_BYTES)
#define WS_SMEM (WS_STAGES * WS_STAGE_BYTES + 1024)

static_assert(K1_BN == 64 || K1_BN == 128 || K1_BN == 256, "K1_BN: 64, 128 or 256 (a wgmma's N)");
static_assert(WS_BN == 64 || WS_BN == 128 || WS_BN == 256, "WS_BN: 64, 128 or 256 (a wgmma's N)");
static_assert(WS_WG_M == 64 || WS_WG_M == 128, "WS_WG_M: 64 or 128 rows per consumer");
static_assert(WS_MT * WS_BN / 2 <= 128, "at most 128 accumulators per consumer thread");
static_assert(K1_STAGES >= 2 && WS_STAGES >= 2, "a pipeline has at least two slots");
static_assert(K1_SMEM <= SMEM_LIMIT && WS_SMEM <= SMEM_LIMIT, "the slots exceed a block's shared memory");
static_assert(WS_BM <= 256, "a TMA box has at most 256 rows");
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && PRODUCER_REGS >= 24 && CONSUMER_REGS <= 256,
              "setmaxnreg takes a multiple of 8 from 24 to 256");
static_assert(128 * PRODUCER_REGS + 128 * WS_CONSUMERS * CONSUMER_REGS <= 65536, "more registers than an SM has");

// matmul_clustered and matmul_async_store: the tile (WS_BM x WS_BN) and the warpgroups are
// matmul_persistent's; the slots and the order of the tiles have their own knobs.
#ifndef CL_STAGES
#define CL_STAGES WS_STAGES                     // slots per block
#endif
#ifndef CL_GROUP_M
#define CL_GROUP_M 8                            // rows of tile pairs per group: 16 rows of tiles (4 was 0.5% slower
                                                // at 4096^3: logs/2026-11-28-h200-gpu-time-and-power.md)
#endif
#ifndef EPI_BUFS
#define EPI_BUFS 2                              // result buffers per consumer (matmul_async_store)
#endif
#ifndef EPI_DEFER
#define EPI_DEFER 5                             // boxes of a consumer's 8 sent during the next tile's first
                                                // slices (matmul_async_store; 0, 2, 4, 5: 0.993, 0.992-0.995,
                                                // 1.000-1.002, 1.004-1.007 of cuBLAS at 4096^3 BF16 on an
                                                // H200; 6 spill): logs/2026-11-28-h200-held-boxes.md
#endif
#define CLUSTER 2                               // blocks per cluster, one above the other (along M)
#define CL_EMPTY_ARRIVALS (CLUSTER * WS_CONSUMERS * 4)   // a slot is free: every consumer warp of both blocks
#define CL_SMEM (CL_STAGES * WS_STAGE_BYTES + 1024)
#define EPI_ROWS 64                             // a box of P: 64 rows (one wgmma block of rows) ...
#define EPI_COLS 32                             // ... by 32 floats, 128 bytes (the 128-byte swizzle's span)
#define EPI_BYTES (EPI_ROWS * EPI_COLS * 4)     // 8,192 bytes
#define AS_SMEM (CL_SMEM + WS_CONSUMERS * EPI_BUFS * EPI_BYTES)
// The static shared memory (the 2 * CL_STAGES barriers, 8 bytes each) counts towards the
// limit too.
static_assert(CL_STAGES >= 2, "a pipeline has at least two slots");
static_assert(CL_SMEM + 16 * CL_STAGES <= SMEM_LIMIT, "CL_STAGES: the slots exceed a block's shared memory");
static_assert(EPI_BUFS >= 2, "EPI_BUFS: at least two (one is filled while the TMA reads another)");
static_assert(AS_SMEM + 16 * CL_STAGES <= SMEM_LIMIT,
              "matmul_async_store: CL_STAGES slots and 2 * EPI_BUFS result buffers exceed a block's shared "
              "memory (at WS_BN = 256: CL_STAGES = 4 allows EPI_BUFS = 2, CL_STAGES = 3 up to 5)");
static_assert(WS_BN % EPI_COLS == 0, "a tile's columns are a whole number of result boxes");

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(HOPPER_SKIP_ARCH_CHECK)
#error "kernels/hopper.cu needs -arch=sm_90a: wgmma and setmaxnreg do not exist on plain sm_90"
#endif

// What a launch needs, read by the host: {threads, BM, BN, dynamic shared memory, stages}.
extern "C" __constant__ int matmul_tma_wgmma_config[5] = {128, K1_BM, K1_BN, K1_SMEM, K1_STAGES};
extern "C" __constant__ int matmul_warp_specialized_config[5] = {WS_THREADS, WS_BM, WS_BN, WS_SMEM, WS_STAGES};
extern "C" __constant__ int matmul_persistent_config[5] = {WS_THREADS, WS_BM, WS_BN, WS_SMEM, WS_STAGES};
extern "C" __constant__ int matmul_clustered_config[5] = {WS_THREADS, WS_BM, WS_BN, CL_SMEM, CL_STAGES};
extern "C" __constant__ int matmul_async_store_config[5] = {WS_THREADS, WS_BM, WS_BN, AS_SMEM, CL_STAGES};
// matmul_async_store's tensor map of P: boxes of {rows, columns}, floats, the 128-byte swizzle.
extern "C" __constant__ int matmul_async_store_box[2] = {EPI_ROWS, EPI_COLS};

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned (cuda.h is not available
// under NVRTC, so it is declared here). A kernel takes it by value as a
// `const __grid_constant__` parameter: the TMA reads it where the launch put it, in the
// kernel's parameter memory, and its address is what a load names.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

// ---- Shared memory addresses and mbarriers -----------------------------------------------
// The TMA, mbarrier and wgmma instructions take 32-bit shared-memory addresses.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// An mbarrier is 8 bytes of shared memory that counts arrivals (and, for the TMA, bytes)
// and completes a phase when both reach zero; phases alternate in parity 0, 1, 0, ...
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// The inits are written by ordinary stores, and the TMA (the "async proxy") completes
// transactions on the barriers: this fence makes the inits visible to it; the
// __syncthreads after it makes them visible to the other threads.
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// One arrival, and `bytes` more to expect from the TMA in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("{ .reg .b64 state; mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }"
                 ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("{ .reg .b64 state; mbarrier.arrive.shared::cta.b64 state, [%0]; }" ::"r"(bar) : "memory");
}

// Wait until the phase of parity `parity` has completed. A barrier just initialized is in
// phase 0, and a wait for parity 1 (the phase "before" it) returns at once: so a producer
// waits for free slots with the parity opposite to the one its consumers wait on.
// With -DHOPPER_WATCHDOG a wait that spins too long traps, so that a deadlock is an error.
// CLUSTER_SCOPE: acquiring at cluster scope, for a barrier whose arrivals and bytes may come
// from the other block of a cluster (matmul_clustered).
template <bool CLUSTER_SCOPE = false>
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#if defined(HOPPER_WATCHDOG)
    unsigned long long tries = 0;
#endif
    do {
        if constexpr (CLUSTER_SCOPE)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
                         "selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        else
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                         "selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if defined(HOPPER_WATCHDOG)
        if (++tries > (1ull << 26))
            __trap();
#endif
    } while (!done);
}

// One arrival on the mbarrier at address `bar` of block `rank` of the cluster (this block's
// own included): mapa turns this block's shared-memory address into the other block's.
// The arrival has the default semantics (release at CTA scope), not .release.cluster: what
// this warp read of the slot, it read through wgmma, whose reads wgmma.wait_group has
// already seen complete, so there is nothing left for a cluster-scope release to order, and
// ptxas builds that release with a full memory barrier (MEMBAR) before the arrival, which
// Nsight Compute measured as the first stall reason of every consumer warp (12.3 cycles per
// instruction issued, against 0 without it).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
    asm volatile("{ .reg .b32 remote; mapa.shared::cluster.u32 remote, %0, %1; "
                 "mbarrier.arrive.shared::cluster.b64 _, [remote]; }"
                 ::"r"(bar), "r"(rank) : "memory");
}

// ---- The tensor memory accelerator -------------------------------------------------------
// The box of the tensor map `map` whose corner is column x, row y (innermost coordinate
// first), into shared memory at dst; its bytes complete on the mbarrier bar. Parts of the
// box outside the matrix are written as zeros, and still counted in the bytes.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap* map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

// Slice `slice` of k for the block tile at (brow, bcol): a ROWS x 64 tile of M in one box,
// and the 64 x COLS tile of N in boxes of 64 columns, side by side (8,192 bytes apart). A
// box of N wholly right of column n is not loaded: only P's columns beyond n, which are
// never stored, would read it. The barrier is told the bytes of the boxes loaded.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_slice(unsigned a_dst, unsigned b_dst, unsigned bar, const TensorMap* mapM,
                                           const TensorMap* mapN, int slice, int brow, int bcol, int n) {
    int chunks = (n - bcol + CHUNK - 1) / CHUNK;
    if (chunks > COLS / CHUNK)
        chunks = COLS / CHUNK;
    mbar_arrive_expect_tx(bar, ROWS * ROW_BYTES + chunks * CHUNK_BYTES);
    tma_load(a_dst, mapM, slice * BK, brow, bar);
    for (int j = 0; j < chunks; ++j)
        tma_load(b_dst + j * CHUNK_BYTES, mapN, bcol + j * CHUNK, slice * BK, bar);
}

// ---- Warpgroup multiply-accumulate (wgmma) -----------------------------------------------
// A wgmma reads its operands from shared memory through 64-bit descriptors: the start
// address, two strides and the swizzle, each address and stride in 16-byte units:
//   bits 0-13 start address, 16-29 leading byte offset (LBO), 32-45 stride byte offset
//   (SBO), 49-51 base offset (0: every tile starts on a 1,024-byte boundary), 62-63 the
//   swizzle (1: 128 bytes).
// With the 128-byte swizzle, the unit is an 8-row x 128-byte block (1,024 bytes) in which
// row r's 16-byte pieces are permuted by XOR with r; the TMA writes it, and wgmma reads it,
// by that same rule.
//   M (A, "K-major": k is contiguous): a tile row of M is 64 values of k, 128 bytes; SBO
//   is 1,024 (the next 8 rows); LBO is unused. Step j of k (16 values, 32 bytes) starts 32 j
//   bytes into the rows: the hardware applies the XOR to the whole address, so it finds
//   the swizzled pieces.
//   N (B, "MN-major": n is contiguous, transposed for wgmma, imm-trans-b = 1): a row of a
//   box is 64 values of n at one k; SBO is 1,024 (the next 8 rows of k), LBO 8,192 (the
//   next box, 64 columns on). Step j of k starts 16 rows (2,048 bytes) down.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16
         | (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32 | 1ull << 62;
}

// Orders this warpgroup's register and shared-memory accesses before the wgmma that follow.
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

// The wgmma issued since the last commit become one group.
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Wait until at most N groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// A wgmma writes its accumulators asynchronously: this empty statement, which "reads and
// writes" each of them, keeps the compiler from moving their other uses across it. It
// comes before wgmma_fence (so that the zeros, or the previous tile's stores, are done
// before the fence) and after each wgmma_wait.
template <int MT, int R>
__device__ __forceinline__ void fence_acc(float (&d)[MT][R]) {
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < R; ++j)
            asm volatile("" : "+f"(d[i][j])::"memory");
}

// d (64 x N floats across the warpgroup, N/2 per thread) += A (64 x 16) B (16 x N), with
// A K-major and B MN-major (imm-trans-a 0, imm-trans-b 1), scale-d 1 (accumulate).
#define F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define F32(i) F8(i), F8(i + 8), F8(i + 16), F8(i + 24)

// The accumulator operands of a wgmma, %0 to %31, %63 or %127 (N = 64, 128, 256).
#define D_REGS_32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define D_REGS_64 D_REGS_32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define D_REGS_128 D_REGS_64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
                   "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
                   "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
                   "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

__device__ __forceinline__ void wgmma_n64(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_TYPES " {" D_REGS_32 "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
        : F32(0)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_TYPES " {" D_REGS_64 "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : F32(0), F32(32)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_TYPES " {" D_REGS_128 "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : F32(0), F32(32), F32(64), F32(96)
        : "l"(da), "l"(db), "r"(1));
}

// d (64 x 256 floats) += A (64 x 8, TF32) B (8 x 256, TF32): A from registers, four per
// thread (a[0] to a[3]: the PTX ISA's "register fragment layout for matrix A" of m64nNk8:
// rows 16 w + l/4 and that + 8, columns l % 4 and that + 4, for warp w and lane l of the
// warpgroup, in the order (r, c), (r + 8, c), (r, c + 4), (r + 8, c + 4)); B K-major from
// shared memory (TF32 operands in shared memory must be K-major: no transpose immediates).
__device__ __forceinline__ void wgmma_tf32_n256(float (&d)[128], const unsigned (&a)[4], unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" D_REGS_128 "}, {%128, %129, %130, %131}, %132, "
        "p, 1, 1;\n}\n"
        : F32(0), F32(32), F32(64), F32(96)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
#undef F32
#undef F8
#undef D_REGS_32
#undef D_REGS_64
#undef D_REGS_128

template <int N>
__device__ __forceinline__ void wgmma(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
    if constexpr (N == 64)
        wgmma_n64(d, da, db);
    else if constexpr (N == 128)
        wgmma_n128(d, da, db);
    else
        wgmma_n256(d, da, db);
}

// One slice of k (64 deep, four steps of 16) for a warpgroup's MT blocks of 64 rows:
// a_base is the warpgroup's rows of the M tile in the slot, b_base the slot's N tile.
template <int BN_, int MT>
__device__ __forceinline__ void mma_slice(float (&d)[MT][BN_ / 2], unsigned a_base, unsigned b_base) {
    #pragma unroll
    for (int j = 0; j < BK / 16; ++j) {
        unsigned long long db = make_desc(b_base + j * 16 * ROW_BYTES, CHUNK_BYTES, 1024);
        #pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            unsigned long long da = make_desc(a_base + mt * 64 * ROW_BYTES + j * 32, 16, 1024);
            wgmma<BN_>(d[mt], da, db);
        }
    }
}

// ---- The result --------------------------------------------------------------------------
// The accumulators of a warpgroup's MT x 64 x BN tile, whose corner in P is (row0, col0),
// into P, guarded. Thread t of the warpgroup (warp w = t/32, lane l) holds, for each block
// of 8 columns j, the pairs at rows 16 w + l/4 and 16 w + l/4 + 8, columns 8 j + 2 (l%4)
// and the next: d[4 j], d[4 j + 1] and d[4 j + 2], d[4 j + 3]. A pair is one 8-byte store
// where both lie inside P and n is even (so the pair is 8-byte aligned).
struct alignas(8) FloatPair {
    float x, y;
};

__device__ __forceinline__ void store_pair(float* P, int m, int n, int r, int c, float x, float y) {
    if (r >= m)
        return;
    float* p = P + (size_t)r * n + c;
    if (c + 1 < n && (n & 1) == 0) {
        *reinterpret_cast<FloatPair*>(p) = FloatPair{x, y};
    } else {
        if (c < n)
            p[0] = x;
        if (c + 1 < n)
            p[1] = y;
    }
}

template <int BN_, int MT>
__device__ __forceinline__ void store_tile(float* P, int m, int n, int row0, int col0, const float (&d)[MT][BN_ / 2]) {
    int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    #pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        int r = row0 + mt * 64 + warp * 16 + lane / 4;
        #pragma unroll
        for (int j = 0; j < BN_ / 8; ++j) {
            int c = col0 + 8 * j + 2 * (lane % 4);
            store_pair(P, m, n, r, c, d[mt][4 * j], d[mt][4 * j + 1]);
            store_pair(P, m, n, r + 8, c, d[mt][4 * j + 2], d[mt][4 * j + 3]);
        }
    }
}

template <int MT, int R>
__device__ __forceinline__ void zero(float (&d)[MT][R]) {
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < R; ++j)
            d[i][j] = 0.0f;
}

// ---------------------------------------------------------------------------------------
// matmul_tma_wgmma: one warpgroup per block, a 64 x K1_BN tile of P. Thread 0 keeps
// K1_STAGES slices of k in flight; every thread waits on a slot's full barrier (step 3a),
// the warpgroup multiplies it and waits for its products (step 3b), and after a
// __syncthreads (every warp's products are done reading the slot) thread 0 reloads the
// slot with the slice K1_STAGES ahead. The TMA copies overlap the multiplies; the
// multiplies of one slice do not overlap those of the next (the next kernel's step).
extern "C" __global__ void __launch_bounds__(128, 1)
matmul_tma_wgmma(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN, float* P,
                 int m, int k, int n) {
    __shared__ unsigned long long full[K1_STAGES];
    extern __shared__ unsigned char smem[];
    // Step 1: the slots, on a 1,024-byte boundary (the swizzle's unit); 1,024 bytes of
    // the dynamic shared memory are there to allow for the rounding up.
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;
    unsigned full0 = smem_u32(full);
    // Step 2: the tile's corner and the number of slices; the loads' indices are the TMA's.
    int brow = blockIdx.y * K1_BM, bcol = blockIdx.x * K1_BN;
    int slices = (k + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < K1_STAGES; ++s)
            mbar_init(full0 + 8 * s, 1);       // one arrival: the thread that sets the bytes
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int s = 0; s < K1_STAGES && s < slices; ++s)
            load_slice<K1_BM, K1_BN>(base + s * K1_STAGE_BYTES, base + s * K1_STAGE_BYTES + K1_A_BYTES,
                                     full0 + 8 * s, &mapM, &mapN, s, brow, bcol, n);
    float d[1][K1_BN / 2];
    zero(d);
    for (int t = 0; t < slices; ++t) {
        int s = t % K1_STAGES;
        unsigned slot = base + s * K1_STAGE_BYTES;
        // Step 3a's wait: the slot's bytes (its use number t / K1_STAGES); thread 0 loaded it.
        mbar_wait(full0 + 8 * s, (t / K1_STAGES) & 1);
        // Step 3b: multiply, and wait for the products.
        fence_acc(d);
        wgmma_fence();
        mma_slice<K1_BN, 1>(d, slot, slot + K1_A_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(d);
        __syncthreads();                        // the slot is free: every warp's products are done
        if (threadIdx.x == 0 && t + K1_STAGES < slices)
            load_slice<K1_BM, K1_BN>(slot, slot + K1_A_BYTES, full0 + 8 * s, &mapM, &mapN, t + K1_STAGES,
                                     brow, bcol, n);
    }
    // Step 4: the tile of P, each element written where it lies inside P.
    store_tile<K1_BN, 1>(P, m, n, brow, bcol, d);
}

// ---------------------------------------------------------------------------------------
// matmul_warp_specialized and matmul_persistent: warpgroup 0 loads, warpgroups 1 and 2
// multiply. For each slot there are two barriers: full (one arrival, the producer's, plus
// the TMA's bytes) and empty (one arrival from each consumer warp: 8). The producer waits
// for a slot to be empty, then loads it; a consumer waits for it to be full, multiplies,
// and hands it back once its products are done. Both count their slices with one counter
// `it` that runs on across tiles: slot it % WS_STAGES, used for the (it / WS_STAGES)-th time.
// A consumer keeps one group of products in flight: after issuing slice t it waits until
// only that group is running (wgmma_wait<1>), so slice t-1's are done and its slot goes back.

// Tile `tile` of a tiles_m x tiles_n grid of tiles, in groups of GROUP_M rows of tiles
// walked column by column: consecutive tiles share a column of N's tiles, and a group's
// GROUP_M rows of M's tiles are reused across its columns.
// (matmul_clustered walks pairs of tiles so, with group = CL_GROUP_M rows of pairs.)
template <int GROUP = GROUP_M>
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int& tm, int& tn) {
    int per_group = GROUP * tiles_n;
    int first = tile / per_group * GROUP;
    int rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
    int within = tile % per_group;
    tm = first + within % rows;
    tn = within / rows;
}

// This thread's warpgroup, as lane 0 of its warp computes it. Every lane computes the same
// value anyway; read through a shuffle, the compiler knows that it is one value per warp,
// and keeps what follows from it (the slots' addresses, the wgmma descriptors) in uniform
// registers, computed once per warp instead of once per thread (CUTLASS's
// canonical_warp_group_idx does the same). Measured on an H200, it took matmul_async_store
// from 0.971 to 0.981 of cuBLAS at 4096^3 (logs/2026-11-28-h200-gpu-time-and-power.md).
__device__ __forceinline__ int warpgroup_index() {
    return __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
}

template <int MODE>
__device__ __forceinline__ void setmaxnreg();

template <>
__device__ __forceinline__ void setmaxnreg<0>() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
}

template <>
__device__ __forceinline__ void setmaxnreg<1>() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
}

// during()'s default: nothing to do while a slice's products run.
struct NoWork {
    __device__ __forceinline__ void operator()(int) const {}
};

// A consumer's part of one tile of P, its products in d: for each slice, wait for the slot's
// tiles (step 3a's wait), multiply them (step 3b) keeping one group of products in flight,
// and hand the slot of the slice before back to the producer (the second __syncthreads, as
// an arrival on its empty mbarrier: one per consumer warp). `it` counts the slices of every tile so far,
// which picks the slot and its phase. CLUSTER_SIZE > 1: the slot's tiles were multicast to
// every block of the cluster, so the slot is free only when every block's consumers are done
// with it: lane r of each warp arrives on block r's barrier. during(t) runs once slice t's
// products are issued, while they run (matmul_async_store sends the tile before's last
// results then).
template <int STAGES, int CLUSTER_SIZE, typename During = NoWork>
__device__ __forceinline__ void consume_tile(float (&d)[WS_MT][WS_BN / 2], unsigned& it, int slices, unsigned base,
                                             unsigned full0, unsigned empty0, int c, int lane,
                                             During during = During()) {
    auto release = [&](unsigned slice) {
        unsigned bar = empty0 + 8 * (slice % STAGES);
        if constexpr (CLUSTER_SIZE > 1) {
            if (lane < CLUSTER_SIZE)
                mbar_arrive_cluster(bar, lane);
        } else if (lane == 0) {
            mbar_arrive(bar);
        }
    };
    zero(d);
    for (int t = 0; t < slices; ++t, ++it) {
        int s = it % STAGES;
        unsigned slot = base + s * WS_STAGE_BYTES;
        mbar_wait<(CLUSTER_SIZE > 1)>(full0 + 8 * s, (it / STAGES) & 1);   // step 3a's wait
        fence_acc(d);                                                       // step 3b
        wgmma_fence();
        mma_slice<WS_BN, WS_MT>(d, slot + c * WS_WG_M * ROW_BYTES, slot + WS_A_BYTES);
        wgmma_commit();
        during(t);
        wgmma_wait<1>();                        // slice t-1's products are done: its slot is free
        fence_acc(d);
        if (t > 0)
            release(it - 1);
    }
    wgmma_wait<0>();
    fence_acc(d);
    if (slices > 0)
        release(it - 1);
}

template <bool PERSISTENT>
__device__ __forceinline__ void warp_specialized(const TensorMap* mapM, const TensorMap* mapN, float* P, int m,
                                                 int k, int n, unsigned base, unsigned full0, unsigned empty0) {
    int wg = warpgroup_index(), lane = threadIdx.x % 32;
    int slices = (k + BK - 1) / BK;
    int tiles_m = (m + WS_BM - 1) / WS_BM, tiles_n = (n + WS_BN - 1) / WS_BN;
    int first = PERSISTENT ? blockIdx.x : 0, step = PERSISTENT ? gridDim.x : 1;
    int tiles = PERSISTENT ? tiles_m * tiles_n : 1;
    if (wg == 0) {
        // The producer: it needs few registers, and gives the rest to the consumers.
        setmaxnreg<0>();
        if (threadIdx.x != 0)
            return;
        unsigned it = 0;
        for (int tile = first; tile < tiles; tile += step) {
            int tm = blockIdx.y, tn = blockIdx.x;
            if (PERSISTENT)
                grouped_tile(tile, tiles_m, tiles_n, tm, tn);
            for (int t = 0; t < slices; ++t, ++it) {
                int s = it % WS_STAGES;
                mbar_wait(empty0 + 8 * s, ((it / WS_STAGES) & 1) ^ 1);   // the slot is free
                load_slice<WS_BM, WS_BN>(base + s * WS_STAGE_BYTES, base + s * WS_STAGE_BYTES + WS_A_BYTES,
                                         full0 + 8 * s, mapM, mapN, t, tm * WS_BM, tn * WS_BN, n);
            }
        }
        return;
    }
    // A consumer: rows c * WS_WG_M ... of the block's tile.
    setmaxnreg<1>();
    int c = wg - 1;
    unsigned it = 0;
    float d[WS_MT][WS_BN / 2];
    for (int tile = first; tile < tiles; tile += step) {
        int tm = blockIdx.y, tn = blockIdx.x;
        if (PERSISTENT)
            grouped_tile(tile, tiles_m, tiles_n, tm, tn);
        consume_tile<WS_STAGES, 1>(d, it, slices, base, full0, empty0, c, lane);
        store_tile<WS_BN, WS_MT>(P, m, n, tm * WS_BM + c * WS_WG_M, tn * WS_BN, d);
    }
}

// The barriers and slots, set up by thread 0 before the warpgroups part.
template <int STAGES = WS_STAGES>
__device__ __forceinline__ void init_barriers(unsigned full0, unsigned empty0) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                      // the producer's arrival
            mbar_init(empty0 + 8 * s, WS_CONSUMERS * 4);      // one per consumer warp
        }
        mbar_init_fence();
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)
matmul_warp_specialized(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN, float* P,
                        int m, int k, int n) {
    __shared__ unsigned long long full[WS_STAGES], empty[WS_STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;
    init_barriers(smem_u32(full), smem_u32(empty));
    warp_specialized<false>(&mapM, &mapN, P, m, k, n, base, smem_u32(full), smem_u32(empty));
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)
matmul_persistent(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN, float* P,
                  int m, int k, int n) {
    __shared__ unsigned long long full[WS_STAGES], empty[WS_STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;
    init_barriers(smem_u32(full), smem_u32(empty));
    warp_specialized<true>(&mapM, &mapN, P, m, k, n, base, smem_u32(full), smem_u32(empty));
}

// ---------------------------------------------------------------------------------------
// matmul_clustered: two blocks share the loads of N.
// In matmul_persistent every block loads, for each slice of k, a 128 x 64 tile of M (16,384
// bytes) and a 64 x 256 tile of N (32,768 bytes) from L2 into its slots: 48 KB for every
// 128 x 256 x 64 slice of products, which at the ~630 TFLOP/s matmul_persistent reaches is
// about 7 TB/s leaving L2 for the H100's 132 SMs (Colab's T4, compute capability 7.5, has
// neither clusters nor the TMA: this step, like the others here, is Hopper's alone). Two
// blocks working on tiles one above the other (rows of tiles 2i and 2i + 1, the same
// column) load the same tile of N: of the 96 KB the two read per slice, 32 KB are a second
// copy.
// Hopper groups blocks into clusters: the blocks of a cluster run at the same time, on SMs
// of one GPC, and can reach each other's shared memory (the "shared::cluster" addresses). A
// cluster of two blocks, one above the other, shares the tile of N: each box of N is read
// from L2 once and multicast by the TMA into the same place of both blocks' slots, and its
// bytes are counted on the full barrier at the same place in each block. Per pair of blocks
// and slice, 16 + 16 + 32 = 64 KB leave L2 instead of 96: a third less, which is what this
// step gains where L2's bandwidth is what holds the tensor cores back. At 4096^3 it was not:
// on an H100 and an H200 this kernel runs within the few hundredths by which
// matmul_persistent's own speed moves between runs. A pair side by side, sharing the tile of M, would save only M's 16 KB
// (96 -> 80): the larger tile is the one to share. Each block's producer loads its own tile
// of M and half of the boxes of N (boxes 0 and 2, or 1 and 3), multicast to both, so that
// both TMAs work and the two blocks run the same code.
// What changes in the handshake:
//   * full: each block's producer still arrives once, and expects all of the slot's bytes,
//     its tile of M and every box of N, the half the other producer sends included. Bytes
//     from the other block may land before this block's producer has announced them: the
//     barrier's byte count goes below zero for a while, which is allowed, and the phase
//     cannot complete before the producer's arrival anyway.
//   * empty: a slot of block 0 is written by both producers (half of N comes from block 1),
//     so a producer may reload slot s only when the consumers of both blocks are done with
//     it. Each consumer warp, done with a slot, arrives on the empty barrier of that slot in
//     both blocks (the other's through its shared::cluster address, given by mapa), and
//     empty counts 16 arrivals: 8 consumer warps in each block. A producer waits on its own
//     block's empty barrier, which completes only when both blocks' slot s are free.
//   * the cluster barrier (barrier.cluster.arrive.release + wait.acquire, every thread of
//     both blocks): once after the barriers are initialised, so that neither block signals
//     the other's barriers before they exist, and once before the end, so that neither block
//     exits while the other may still arrive on its barriers.
// The pairs of tiles are walked as matmul_persistent walks tiles: in groups of CL_GROUP_M
// rows of pairs, cluster c taking pairs c, c + clusters, ... Both blocks of a cluster walk
// the same pairs, so they load and release the same slots in the same order. When the rows
// of tiles are odd in number, the last pairs' lower tile lies past the matrix: its block
// still runs (it sends half of N to its partner, and its consumers free the slots), loads
// the last real tile of M so that no box lies wholly outside the matrix, and stores nothing.

// ---- Clusters ------------------------------------------------------------------------------
// This block's place in its cluster (0 or 1: the bit of the multicast mask that names it),
// the cluster's index in the grid, and the number of clusters.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ int cluster_index() {
    unsigned r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return (int)r;
}

__device__ __forceinline__ int cluster_count() {
    unsigned r;
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
    return (int)r;
}

// Every thread of every block of the cluster: what each wrote before (the barriers' inits,
// made visible at cluster scope by mbar_init_fence) is seen by all after.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// tma_load, into every block of the cluster named in `mask` (bit r: the block of rank r):
// the box is read once and written at the same shared-memory offset (dst) in each, its bytes
// completing on the mbarrier at the same offset (bar) in each.
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const TensorMap* map, int x, int y, unsigned bar,
                                                   unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
        : "memory");
}

// ---- The result through shared memory and the TMA (matmul_async_store) ----------------------
// In matmul_persistent and matmul_clustered the consumers store their products straight
// from registers: 64 stores of 8 bytes per thread per tile, each warp's store touching 32
// bytes of each of 8 rows, 128 KB per block, while the tensor cores wait for the next tile.
// Here each consumer writes its 64 x 256 floats into shared memory a box of 64 rows x 32
// columns (8,192 bytes) at a time, and one of its threads hands the box to the TMA
// (cp.async.bulk.tensor from shared to global memory), which writes whole 128-byte rows of P
// while the warpgroup fills the next buffer. Only the first 3 of a tile's 8 boxes go out
// before the next tile's products start: the last EPI_DEFER (5) wait in registers and go
// out one after each of the next tile's first slices is issued, while its products run
// (TileStores). The tensor cores then wait for 3 boxes per tile, not 8: at 4096^3 on an
// H200, 1.004 to 1.007 of cuBLAS in BF16 against 0.993 (logs/2026-11-28-h200-held-boxes.md).
// The boxes are laid out in the
// 128-byte swizzle, as the tensor map of P says: row r's 16-byte pieces permuted by XOR with
// r % 8, so that a warp's 8-byte writes (8 rows x 4 threads x 2 pieces) fall in different
// banks, 2 wavefronts for 256 bytes. The TMA writes nothing outside P (no guard is needed
// for the edges); a box wholly outside P is not issued.
// The order that makes it safe, for each box:
//   1. every thread writes its values (st.shared), then fence.proxy.async: the writes of
//      ordinary stores become visible to the TMA, which reads through the "async proxy";
//   2. thread 0 of the warpgroup waits until the store that last read the *next* buffer has
//      finished reading it (cp.async.bulk.wait_group.read: reading, not writing to global
//      memory, is what the buffer waits for), and the warpgroup's 128 threads meet at a named
//      barrier (bar.sync 1 or 2: one per consumer, so the consumers do not wait for each
//      other);
//   3. thread 0 issues the store and commits it as a bulk group.
// The count of boxes sent (`sent`) runs on across tiles, so box b always uses buffer
// b % EPI_BUFS, and the wait in step 2 of box b is for box b + 1 - EPI_BUFS (at most
// EPI_BUFS - 2 of the boxes before b still reading), the last to use the buffer box b + 1
// will fill. With EPI_BUFS = 2 the TMA reads box b - 1 while the warpgroup writes box b.
__device__ __forceinline__ void st_shared_v2(unsigned addr, float x, float y) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// The box of the tensor map `map` whose corner is column x, row y, from shared memory at src.
__device__ __forceinline__ void tma_store(const TensorMap* map, unsigned src, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(src) : "memory");
}

__device__ __forceinline__ void bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Wait until at most N of this thread's bulk groups are still reading shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Wait until all of this thread's bulk groups are complete (their writes done).
__device__ __forceinline__ void bulk_wait_all() {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// One box of a consumer's results, P's columns x ... x + 31 and rows y ... y + 63, through
// the next of its EPI_BUFS buffers at `buffers`; `id` is the consumer's named barrier. v is
// thread t's 16 values there (warp w, lane l): rows r = 16 w + l/4 and r + 8, four blocks jj
// of 8 columns, columns 8 jj + 2 (l%4) and the next (store_tile's layout). Block jj puts its
// pair at byte 32 jj + 8 (l%4) of the row: 16-byte piece 2 jj + (l%4)/2, swizzled to
// piece ^ (r % 8), where r % 8 = (r + 8) % 8 = l/4.
__device__ __forceinline__ void store_box(const TensorMap* mapP, const float (&v)[16], int x, int y,
                                          unsigned buffers, unsigned& sent, int id) {
    int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    int r = warp * 16 + lane / 4;
    unsigned swz = lane / 4, half = 8 * (lane % 2);
    unsigned buf = buffers + (sent % EPI_BUFS) * EPI_BYTES;
    #pragma unroll
    for (int jj = 0; jj < EPI_COLS / 8; ++jj) {
        unsigned piece = ((2 * jj + (lane % 4) / 2) ^ swz) * 16 + half;
        st_shared_v2(buf + r * ROW_BYTES + piece, v[4 * jj], v[4 * jj + 1]);
        st_shared_v2(buf + (r + 8) * ROW_BYTES + piece, v[4 * jj + 2], v[4 * jj + 3]);
    }
    fence_proxy_async();                                   // 1
    if (t == 0)
        bulk_wait_read<EPI_BUFS - 2>();                    // 2: the next buffer is free
    named_barrier(id, 128);
    if (t == 0) {                                          // 3
        tma_store(mapP, buf, x, y);
        bulk_commit();
    }
    ++sent;
}

// A consumer's results, box by box. Its MT x 64 x BN_ tile is BOXES boxes; box b covers rows
// 64 (b / PER_ROW) ... and columns 32 (b % PER_ROW) ... of the tile, the values
// d[b / PER_ROW][16 (b % PER_ROW) ...]. store() sends the first BOXES - EPI_DEFER boxes of a
// tile at once and copies the last EPI_DEFER into `held`, so that the consumer starts the
// next tile's products sooner; during(t), once the next tile's slice t is issued, sends held
// box t while those products run; flush(from) sends the held boxes from `from` on (those that
// the next tile's slices did not take: at the end of the walk, or when k has fewer slices than
// EPI_DEFER). A box wholly outside P is not sent (the same for the whole warpgroup).
template <int BN_, int MT>
struct TileStores {
    static constexpr int PER_ROW = BN_ / EPI_COLS, BOXES = MT * PER_ROW, NOW = BOXES - EPI_DEFER;
    static_assert(EPI_DEFER >= 0 && EPI_DEFER < BOXES, "EPI_DEFER: fewer boxes than a consumer's tile has");
    const TensorMap* map;
    int m, n, id;
    unsigned buffers, sent = 0;
    float held[EPI_DEFER > 0 ? EPI_DEFER : 1][16];
    int row0 = 0, col0 = 0;                     // the held boxes' tile
    bool holding = false;

    __device__ __forceinline__ void send(const float (&v)[16], int b, int r0, int c0) {
        int y = r0 + 64 * (b / PER_ROW), x = c0 + EPI_COLS * (b % PER_ROW);
        if (y < m && x < n)
            store_box(map, v, x, y, buffers, sent, id);
    }

    // Box b's 16 values of this thread, out of the accumulators.
    static __device__ __forceinline__ void box(const float (&d)[MT][BN_ / 2], int b, float (&v)[16]) {
        #pragma unroll
        for (int e = 0; e < 16; ++e)
            v[e] = d[b / PER_ROW][16 * (b % PER_ROW) + e];
    }

    __device__ __forceinline__ void store(const float (&d)[MT][BN_ / 2], int r0, int c0) {
        #pragma unroll
        for (int b = 0; b < NOW; ++b) {
            float v[16];
            box(d, b, v);
            send(v, b, r0, c0);
        }
        #pragma unroll
        for (int i = 0; i < EPI_DEFER; ++i)
            box(d, NOW + i, held[i]);
        row0 = r0;
        col0 = c0;
        holding = EPI_DEFER > 0;
    }

    __device__ __forceinline__ void during(int t) {
        if (holding) {
            #pragma unroll
            for (int i = 0; i < EPI_DEFER; ++i)
                if (t == i)
                    send(held[i], NOW + i, row0, col0);
        }
    }

    __device__ __forceinline__ void flush(int from) {
        if (holding) {
            #pragma unroll
            for (int i = 0; i < EPI_DEFER; ++i)
                if (i >= from)
                    send(held[i], NOW + i, row0, col0);
        }
        holding = false;
    }
};

// ---- The clustered kernels -----------------------------------------------------------------
// The barriers, initialised by thread 0 of each block, then the cluster barrier: after it,
// either block may signal the other's barriers.
__device__ __forceinline__ void init_cluster_barriers(unsigned full0, unsigned empty0) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < CL_STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                      // this block's producer
            mbar_init(empty0 + 8 * s, CL_EMPTY_ARRIVALS);     // every consumer warp of both blocks
        }
        mbar_init_fence();
    }
    cluster_sync();
}

// warp_specialized<true> in clusters of two. Every thread returns from here (none leaves
// early), so that all of them reach the final cluster barrier.
template <bool ASYNC_STORE>
__device__ __forceinline__ void clustered(const TensorMap* mapM, const TensorMap* mapN, const TensorMap* mapP,
                                          float* P, int m, int k, int n, unsigned base, unsigned full0,
                                          unsigned empty0) {
    int wg = warpgroup_index(), lane = threadIdx.x % 32;
    unsigned rank = cluster_rank();
    int slices = (k + BK - 1) / BK;
    int tiles_m = (m + WS_BM - 1) / WS_BM, tiles_n = (n + WS_BN - 1) / WS_BN;
    int pairs_m = (tiles_m + 1) / 2, pairs = pairs_m * tiles_n;
    int first = cluster_index(), step = cluster_count();
    if (wg == 0) {
        // The producer: its tile of M alone, and half of the boxes of N for both blocks.
        setmaxnreg<0>();
        if (threadIdx.x == 0) {
            unsigned it = 0;
            for (int pair = first; pair < pairs; pair += step) {
                int pm, tn;
                grouped_tile<CL_GROUP_M>(pair, pairs_m, tiles_n, pm, tn);
                int tm = 2 * pm + (int)rank;
                int arow = (tm < tiles_m ? tm : tiles_m - 1) * WS_BM;   // a tile past the matrix loads a real one
                int bcol = tn * WS_BN;
                int chunks = (n - bcol + CHUNK - 1) / CHUNK;           // boxes of N inside the matrix
                if (chunks > WS_BN / CHUNK)
                    chunks = WS_BN / CHUNK;
                for (int t = 0; t < slices; ++t, ++it) {
                    int s = it % CL_STAGES;
                    unsigned slot = base + s * WS_STAGE_BYTES, bar = full0 + 8 * s;
                    // The slot is free in both blocks.
                    mbar_wait<true>(empty0 + 8 * s, ((it / CL_STAGES) & 1) ^ 1);
                    mbar_arrive_expect_tx(bar, WS_A_BYTES + chunks * CHUNK_BYTES);
                    tma_load(slot, mapM, t * BK, arow, bar);
                    for (int j = (int)rank; j < chunks; j += CLUSTER)
                        tma_load_multicast(slot + WS_A_BYTES + j * CHUNK_BYTES, mapN, bcol + j * CHUNK, t * BK, bar,
                                           (unsigned short)((1u << CLUSTER) - 1));
                }
            }
        }
        __syncwarp();                           // warp 0 together again before the cluster barrier
    } else {
        // A consumer: as in matmul_persistent, but a slot it is done with is handed back to
        // both blocks (lane 0 arrives on block 0's empty barrier, lane 1 on block 1's).
        setmaxnreg<1>();
        int c = wg - 1;
        unsigned it = 0;
        float d[WS_MT][WS_BN / 2];
        // matmul_async_store: the results through this consumer's buffers, its named barrier 1 + c.
        unsigned buffers = base + CL_STAGES * WS_STAGE_BYTES + c * EPI_BUFS * EPI_BYTES;
        TileStores<WS_BN, WS_MT> stores{mapP, m, n, 1 + c, buffers};
        for (int pair = first; pair < pairs; pair += step) {
            int pm, tn;
            grouped_tile<CL_GROUP_M>(pair, pairs_m, tiles_n, pm, tn);
            int tm = 2 * pm + (int)rank;
            int row0 = tm * WS_BM + c * WS_WG_M, col0 = tn * WS_BN;        // rows past m: nothing is stored
            consume_tile<CL_STAGES, CLUSTER>(d, it, slices, base, full0, empty0, c, lane, [&](int t) {
                if constexpr (ASYNC_STORE)
                    stores.during(t);
            });
            if constexpr (ASYNC_STORE) {
                stores.flush(slices);
                stores.store(d, row0, col0);
            } else {
                store_tile<WS_BN, WS_MT>(P, m, n, row0, col0, d);
            }
        }
        if constexpr (ASYNC_STORE) {
            stores.flush(0);
            if (threadIdx.x % 128 == 0)
                bulk_wait_all();                // the last boxes are written before the block ends
        }
    }
}

#if !defined(__cluster_dims__)
#define __cluster_dims__(...) __attribute__((cluster_dims(__VA_ARGS__)))
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(WS_THREADS, 1)
matmul_clustered(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN, float* P,
                 int m, int k, int n) {
    __shared__ unsigned long long full[CL_STAGES], empty[CL_STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // the same offset in both blocks
    init_cluster_barriers(smem_u32(full), smem_u32(empty));
    clustered<false>(&mapM, &mapN, nullptr, P, m, k, n, base, smem_u32(full), smem_u32(empty));
    cluster_sync();                             // no block leaves while the other may signal it
}

// matmul_clustered, its results through shared memory and the TMA: the tensor map of P in
// place of P.
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(WS_THREADS, 1)
matmul_async_store(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN,
                   const __grid_constant__ TensorMap mapP, int m, int k, int n) {
    __shared__ unsigned long long full[CL_STAGES], empty[CL_STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;
    init_cluster_barriers(smem_u32(full), smem_u32(empty));
    clustered<true>(&mapM, &mapN, &mapP, nullptr, m, k, n, base, smem_u32(full), smem_u32(empty));
    cluster_sync();
}

// ---------------------------------------------------------------------------------------
// matmul_tf32: float inputs, multiplied in TF32 (a float's sign, 8 exponent bits and 10
// mantissa bits), from registers.
// wgmma reads TF32 operands from shared memory only "K-major" (k contiguous): no transpose
// immediates exist for them. A tile of M is K-major as it lies in memory, but a tile of N,
// row-major, has n contiguous. So this kernel computes the transpose, P^T = N^T M^T: the
// wgmma's B is the tile of M, K-major as loaded, and its A is the tile of N read by each
// thread into registers (wgmma's "A from registers" form), where the layout in shared memory
// does not matter, only the four values each thread must hold. The accumulators hold a tile
// of P^T: each thread's values are columns of P, which the stores turn back.
// The block: matmul_persistent's three warpgroups and persistent walk, on a tile of
// TF_BM = 256 rows by TF_BN = 128 columns of P; consumer c computes columns 64 c ... 64 c + 63
// of it, for all 256 rows, with one wgmma of 64 x 256 x 8 per step of k (the wgmma's 64 rows
// are 64 columns of P, its 256 columns the tile's rows). A slice of k is 32 floats (the
// 128-byte row of the swizzle): a 256 x 32 box of M (32,768 bytes) and four 32 x 32 boxes of N
// (4,096 bytes each), 49,152 bytes per slot, as matmul_persistent's.
// A thread's A values for step j of a slice: rows r = 16 w + l/4 and r + 8 of its consumer's
// 64 (columns of N), columns l % 4 and l % 4 + 4 of the step's 8 (rows of N, 8 j on). In the
// slot, column x of N's box b, row kk, is at b * 4,096 + kk * 128 + 16 ((x / 4) ^ (kk % 8)) +
// 4 (x % 4) bytes (the 128-byte swizzle); kk % 8 is the same for every step, so each thread
// computes its four offsets once and adds 1,024 bytes (8 rows) per step.
// The registers a wgmma reads stay in use until wait_group says its group is done, and
// ptxas serializes every wgmma of a function in which other instructions write a wgmma's
// input registers while a group is in flight (its "C7513 Potential Performance Loss"): so a
// consumer cannot read the next slice's A while this slice's products are being computed,
// as the 16-bit kernels' consumers keep one group in flight. Each consumer waits for its
// group (wgmma_wait<0>) before it reads the next A; the tensor cores stay busy with the
// other consumer's group meanwhile.
#define TF_BK 32                                // k per slice: 32 floats, 128 bytes
#define TF_BM 256                               // rows of P per tile: the wgmma's N
#define TF_BN 128                               // columns of P per tile: 64 per consumer
#ifndef TF_STAGES
#define TF_STAGES 4
#endif
#define TF_M_BYTES (TF_BM * ROW_BYTES)          // a slice of M: 32,768 bytes
#define TF_BOX_BYTES (TF_BK * ROW_BYTES)        // a 32 x 32 box of N: 4,096 bytes
#define TF_STAGE_BYTES (TF_M_BYTES + TF_BN / TF_BK * TF_BOX_BYTES)
#define TF_SMEM (TF_STAGES * TF_STAGE_BYTES + 1024)
static_assert(TF_STAGES >= 2 && TF_SMEM + 16 * TF_STAGES <= SMEM_LIMIT, "TF_STAGES: 2 or more slots that fit");
extern "C" __constant__ int matmul_tf32_config[5] = {WS_THREADS, TF_BM, TF_BN, TF_SMEM, TF_STAGES};

// Step j's A values of slot `n_tile` (N's boxes, a generic pointer) at this thread's offsets.
__device__ __forceinline__ void load_a_tf32(unsigned (&a)[4], const unsigned char* n_tile, const unsigned (&off)[4],
                                            int j) {
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        a[i] = *reinterpret_cast<const unsigned*>(n_tile + off[i] + j * 8 * ROW_BYTES);
}

// One slice for a consumer: wait for the slot, read A, multiply the slice's four steps as one
// group, wait for it, and hand the slot back.
template <typename Release>
__device__ __forceinline__ void tf32_slice(float (&d)[1][TF_BM / 2], unsigned it, unsigned base,
                                           const unsigned char* gbase, unsigned full0, const unsigned (&off)[4],
                                           const Release& release) {
    int s = it % TF_STAGES;
    unsigned a[TF_BK / 8][4];
    mbar_wait(full0 + 8 * s, (it / TF_STAGES) & 1);
    #pragma unroll
    for (int j = 0; j < TF_BK / 8; ++j)
        load_a_tf32(a[j], gbase + s * TF_STAGE_BYTES + TF_M_BYTES, off, j);
    fence_acc(d);
    wgmma_fence();                              // the A registers just written, before the wgmma read them
    #pragma unroll
    for (int j = 0; j < TF_BK / 8; ++j)
        wgmma_tf32_n256(d[0], a[j], make_desc(base + s * TF_STAGE_BYTES + j * 32, 16, 1024));
    wgmma_commit();
    wgmma_wait<0>();
    fence_acc(d);
    release(it);
}

// The accumulators of consumer tile (rows row0 ..., columns col0 ... of P): thread (warp w,
// lane l) holds P^T's rows 16 w + l/4 and that + 8, i.e. columns col0 + 16 w + l/4 (+ 8) of P,
// and for each 8 of the wgmma's columns j, its columns 8 j + 2 (l % 4) and the next, i.e.
// rows row0 + 8 j + 2 (l % 4) (+ 1) of P: d[4 j + h] is row 8 j + 2 (l % 4) + h % 2, column
// 16 w + l/4 + 8 (h / 2). A warp's store writes 8 consecutive floats (32 bytes) in each of 4
// rows.
__device__ __forceinline__ void store_tile_tf32(float* P, int m, int n, int row0, int col0,
                                                const float (&d)[1][TF_BM / 2]) {
    int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    int c = col0 + warp * 16 + lane / 4;
    #pragma unroll
    for (int j = 0; j < TF_BM / 8; ++j)
        #pragma unroll
        for (int h = 0; h < 4; ++h) {
            int r = row0 + 8 * j + 2 * (lane % 4) + h % 2, cc = c + 8 * (h / 2);
            if (r < m && cc < n)
                P[(size_t)r * n + cc] = d[0][4 * j + h];
        }
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)
matmul_tf32(const __grid_constant__ TensorMap mapM, const __grid_constant__ TensorMap mapN, float* P,
            int m, int k, int n) {
    __shared__ unsigned long long full[TF_STAGES], empty[TF_STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = (smem_u32(smem) + 1023) & ~1023u;
    const unsigned char* gbase = smem + (base - smem_u32(smem));   // the same, as a pointer
    unsigned full0 = smem_u32(full), empty0 = smem_u32(empty);
    init_barriers<TF_STAGES>(full0, empty0);
    int wg = warpgroup_index(), lane = threadIdx.x % 32;
    int slices = (k + TF_BK - 1) / TF_BK;
    int tiles_m = (m + TF_BM - 1) / TF_BM, tiles_n = (n + TF_BN - 1) / TF_BN;
    if (wg == 0) {
        setmaxnreg<0>();
        if (threadIdx.x != 0)
            return;
        unsigned it = 0;
        for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
            int tm, tn;
            grouped_tile(tile, tiles_m, tiles_n, tm, tn);
            for (int t = 0; t < slices; ++t, ++it) {
                int s = it % TF_STAGES;
                unsigned slot = base + s * TF_STAGE_BYTES;
                mbar_wait(empty0 + 8 * s, ((it / TF_STAGES) & 1) ^ 1);
                // load_slice's loads, for floats (N's boxes 32 columns wide), and every box of N,
                // those wholly past column n too (the TMA writes them as zeros): each thread
                // reads its A values from them, and what a thread reads must have been written.
                mbar_arrive_expect_tx(full0 + 8 * s, TF_STAGE_BYTES);
                tma_load(slot, &mapM, t * TF_BK, tm * TF_BM, full0 + 8 * s);
                for (int j = 0; j < TF_BN / TF_BK; ++j)
                    tma_load(slot + TF_M_BYTES + j * TF_BOX_BYTES, &mapN, tn * TF_BN + j * TF_BK, t * TF_BK,
                             full0 + 8 * s);
            }
        }
        return;
    }
    setmaxnreg<1>();
    int c = wg - 1, w = (threadIdx.x % 128) / 32;
    // This thread's A offsets in a slot's N: rows kk = l % 4 and l % 4 + 4 of a step, columns
    // x = 64 c + 16 w + l/4 and x + 8 (box x / 32).
    unsigned off[4];
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        unsigned x = 64 * c + 16 * w + lane / 4 + 8 * (i % 2), kk = lane % 4 + 4 * (i / 2);
        off[i] = (x / 32) * TF_BOX_BYTES + kk * ROW_BYTES + 16 * (((x % 32) / 4) ^ kk) + 4 * (x % 4);
    }
    // The slot goes back by one arrival per warp, lane 0's, so the other lanes' reads of it
    // must be ordered before that arrival: __syncwarp() orders them (the wgmma that used the
    // values, collective as it is, does not order memory).
    auto release = [&](unsigned slice) {
        __syncwarp();
        if (lane == 0)
            mbar_arrive(empty0 + 8 * (slice % TF_STAGES));
    };
    unsigned it = 0;
    float d[1][TF_BM / 2];
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int tm, tn;
        grouped_tile(tile, tiles_m, tiles_n, tm, tn);
        zero(d);
        for (int t = 0; t < slices; ++t)
            tf32_slice(d, it++, base, gbase, full0, off, release);
        store_tile_tf32(P, m, n, tm * TF_BM, tn * TF_BN + 64 * c, d);
    }
}
