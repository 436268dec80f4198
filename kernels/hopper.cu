// Hopper: the tiled product once more, where the lecture's four steps become hardware.
// P (m x n, float) = M (m x k) times N (k x n), all row-major as in tensor_cores.cu, with M
// and N in 16-bit floats and every product accumulated in float:
//   (default)      __nv_bfloat16 inputs
//   -DHOPPER_FP16  __half inputs
// Compile for sm_90a (NVRTC or nvcc: -arch=sm_90a -std=c++17): the warpgroup multiply
// (wgmma) and the register hand-over (setmaxnreg) exist only on that target, not on plain
// sm_90, and nothing here runs on an earlier GPU: the tensor memory accelerator (TMA),
// mbarrier transaction counts and wgmma came with compute capability 9.0. None of these
// kernels runs on Colab's T4 (compute capability 7.5), whose tensor cores the wmma kernels
// of tensor_cores.cu reach; the book's numbers for this file come from the H100.
// The lecture's four steps, and what each becomes here:
//   1. allocate the tiles: STAGES slots of dynamic shared memory, each holding a BM x BK
//      tile of M and a BK x BN tile of N, laid out (swizzled) as the TMA writes them and as
//      wgmma reads them, so that no step rearranges them in between;
//   2. compute the indices: gone from the kernel. A tensor map, built once on the host
//      (cudacheck.tensormap), holds the matrix's address, its sizes, its row pitch and the
//      tile's shape; a load names only the tile's corner (column, row), and the TMA computes
//      every address, and writes zeros wherever the tile reaches past the matrix (so the
//      edges need no guard, and neither m, n nor k need be a multiple of a tile);
//   3. load a tile and wait: one thread issues the copy (cp.async.bulk.tensor), the TMA
//      moves the whole tile while every thread is free, and an mbarrier, told how many
//      bytes to expect (expect_tx), completes its phase when they have all landed: a wait
//      on it replaces the first __syncthreads;
//   4. multiply and wait: a warpgroup (4 warps, 128 threads) multiplies the tiles straight
//      from shared memory (wgmma.mma_async, 64 x BN x 16 per instruction, accumulators in
//      registers), asynchronously: wgmma.wait_group waits for the products, and a slot is
//      handed back to the loads by a second mbarrier (empty), which replaces the second
//      __syncthreads.
// Three kernels, each a step from the one before, selected by name:
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
//   matmul_persistent         the same blocks, one per SM (the grid is the number of SMs),
//                             each walking tiles of P in a grouped order (GROUP_M rows of
//                             tiles at a time, so that blocks running together share tiles
//                             of M and N in L2); the producer loads the next tile's slices
//                             while the consumers store the last one.
// The launches: matmul_tma_wgmma, 128 threads in a grid of ceil(n/K1_BN) x ceil(m/64);
// matmul_warp_specialized, 384 threads in a grid of ceil(n/WS_BN) x ceil(m/(2*WS_WG_M));
// matmul_persistent, 384 threads in a grid of min(SMs, tiles); each with the dynamic shared
// memory its *_config array gives. The arguments: the tensor maps of M and N (128 bytes each,
// passed by value), then P, m, k, n. The tensor map of M has boxes of 64 columns by BM rows,
// that of N boxes of 64 columns by 64 rows, both with the 128-byte swizzle; a tensor map
// needs every row of its matrix to start at a multiple of 16 bytes (k and n multiples of 8
// for 16-bit elements, or a padded row pitch: cudacheck.tensormap.pad_rows).
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

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(HOPPER_SKIP_ARCH_CHECK)
#error "kernels/hopper.cu needs -arch=sm_90a: wgmma and setmaxnreg do not exist on plain sm_90"
#endif

// What a launch needs, read by the host: {threads, BM, BN, dynamic shared memory, stages}.
extern "C" __constant__ int matmul_tma_wgmma_config[5] = {128, K1_BM, K1_BN, K1_SMEM, K1_STAGES};
extern "C" __constant__ int matmul_warp_specialized_config[5] = {WS_THREADS, WS_BM, WS_BN, WS_SMEM, WS_STAGES};
extern "C" __constant__ int matmul_persistent_config[5] = {WS_THREADS, WS_BM, WS_BN, WS_SMEM, WS_STAGES};

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
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#if defined(HOPPER_WATCHDOG)
    unsigned long long tries = 0;
#endif
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if defined(HOPPER_WATCHDOG)
        if (++tries > (1ull << 26))
            __trap();
#endif
    } while (!done);
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

__device__ __forceinline__ void wgmma_n64(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
        : F32(0)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : F32(0), F32(32)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : F32(0), F32(32), F32(64), F32(96)
        : "l"(da), "l"(db), "r"(1));
}
#undef F32
#undef F8

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
// K1_STAGES slices of k in flight; every thread waits on a slot's full barrier (step 3),
// the warpgroup multiplies it and waits for its products (step 4), and after a
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
    // Step 2: the tile's corner; every other index is the TMA's.
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
        // Step 3: wait for the slot's bytes (its use number t / K1_STAGES).
        mbar_wait(full0 + 8 * s, (t / K1_STAGES) & 1);
        // Step 4: multiply, and wait for the products.
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
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int& tm, int& tn) {
    int per_group = GROUP_M * tiles_n;
    int first = tile / per_group * GROUP_M;
    int rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
    int within = tile % per_group;
    tm = first + within % rows;
    tn = within / rows;
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

template <bool PERSISTENT>
__device__ __forceinline__ void warp_specialized(const TensorMap* mapM, const TensorMap* mapN, float* P, int m,
                                                 int k, int n, unsigned base, unsigned full0, unsigned empty0) {
    int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
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
        zero(d);
        for (int t = 0; t < slices; ++t, ++it) {
            int s = it % WS_STAGES;
            unsigned slot = base + s * WS_STAGE_BYTES;
            mbar_wait(full0 + 8 * s, (it / WS_STAGES) & 1);               // step 3
            fence_acc(d);                                                  // step 4
            wgmma_fence();
            mma_slice<WS_BN, WS_MT>(d, slot + c * WS_WG_M * ROW_BYTES, slot + WS_A_BYTES);
            wgmma_commit();
            wgmma_wait<1>();                    // slice t-1's products are done: its slot is free
            fence_acc(d);
            if (t > 0 && lane == 0)
                mbar_arrive(empty0 + 8 * ((it - 1) % WS_STAGES));
        }
        wgmma_wait<0>();
        fence_acc(d);
        if (slices > 0 && lane == 0)
            mbar_arrive(empty0 + 8 * ((it - 1) % WS_STAGES));
        store_tile<WS_BN, WS_MT>(P, m, n, tm * WS_BM + c * WS_WG_M, tn * WS_BN, d);
    }
}

// The barriers and slots, set up by thread 0 before the warpgroups part.
__device__ __forceinline__ void init_barriers(unsigned full0, unsigned empty0) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < WS_STAGES; ++s) {
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
