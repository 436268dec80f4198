// Tensor cores: the tiled product again, with warp-level matrix fragments (nvcuda::wmma).
// P (m x n, float) = M (m x k) times N (k x n), row-major, with M and N in the precision
// the build names and every product accumulated in float:
//   (default)   __half inputs, 16 x 16 x 16 fragments          (compute capability 7.0+)
//   -DTC_BF16   __nv_bfloat16 inputs, 16 x 16 x 16 fragments   (8.0+)
//   -DTC_TF32   float inputs, rounded to TF32 (10-bit mantissa) in the fragments,
//               16 x 16 x 8 fragments                          (8.0+)
//
// A fragment is a 16 x 16 (or 16 x 8) tile of a matrix held jointly by the 32 threads of
// a warp: each thread holds some of its elements, which ones is not specified. Every
// wmma call is made by the whole warp together, with the same pointer, leading dimension
// (ldm, in elements: a multiple of 16 bytes) and layout; the pointer is 32-byte aligned.
// mma_sync(d, a, b, c) computes d = a*b + c for a whole 16 x 16 x 16 block on the tensor
// cores in one instruction sequence, where the SIMT rungs took 4,096 multiply-adds.
//
// Two kernels, the tensor-core version of chapter 2's tiled kernel and of the ladder:
//   matmul_wmma_tiled      tiles staged through shared memory with guarded loads (zeros
//                          outside M and N), as in tiled_bounds.cu; a warp computes a
//                          32 x 32 tile of P as 2 x 2 fragments.
//   matmul_wmma_pipelined  bigger tiles per block and per warp, shared rows padded against
//                          bank conflicts, slices of k staged by asynchronous copies in a
//                          pipeline of STAGES (ladder rung 6's ideas), and fragments
//                          double-buffered in registers.
// The launches: matmul_wmma_tiled, blocks of 128 threads in a grid of ceil(n/64) x
// ceil(m/64); matmul_wmma_pipelined, blocks of 32 * (BM/WM) * (BN/WN) threads (128) in a grid
// of ceil(n/BN) x ceil(m/BM), with STAGES * (BM*(BK+PAD) + BK*(BN+PAD)) elements of dynamic
// shared memory (56,832 bytes for FP16 and BF16, 56,064 for TF32, at the defaults, which fit
// the 64 KiB a block may have on a T4; the tuner's fastest tiles on an H100 or H200,
// -DBN=256 -DSTAGES=3 to 5, need more).
#include <mma.h>
#if defined(TC_BF16)
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;                   // what M and N hold
typedef __nv_bfloat16 frag_t;                   // what a fragment holds
#define FRAG_K 16
#elif defined(TC_TF32)
typedef float elem_t;
typedef nvcuda::wmma::precision::tf32 frag_t;
#define FRAG_K 8
#else
#include <cuda_fp16.h>
typedef __half elem_t;
typedef __half frag_t;
#define FRAG_K 16
#endif
#include <cuda_pipeline.h>
using namespace nvcuda;

#define VEC (16 / (int)sizeof(elem_t))   // elements in 16 bytes: 8 of 16 bits, 4 floats

typedef wmma::fragment<wmma::matrix_a, 16, 16, FRAG_K, frag_t, wmma::row_major> a_frag;
typedef wmma::fragment<wmma::matrix_b, 16, 16, FRAG_K, frag_t, wmma::row_major> b_frag;
typedef wmma::fragment<wmma::accumulator, 16, 16, FRAG_K, float> c_frag;

// A fragment of TF32 values is loaded as floats and must be rounded to TF32 before
// mma_sync (the Programming Guide's rule); 16-bit fragments hold their values exactly.
template <class Frag>
__device__ __forceinline__ void round_to_precision(Frag& f) {
#if defined(TC_TF32)
    for (int i = 0; i < f.num_elements; ++i)
        f.x[i] = wmma::__float_to_tf32(f.x[i]);
#endif
}

// The accumulator c into P at (row, col): straight from the fragment where the whole
// 16 x 16 tile lies inside P and its address is 32-byte aligned (n a multiple of 8);
// otherwise through `stage`, this warp's 16 x 16 floats of shared memory, and then only
// the elements inside P, one per lane at a time.
__device__ __forceinline__ void store_tile(float* P, int m, int n, int row, int col, const c_frag& c,
                                           float* stage) {
    if (row + 16 <= m && col + 16 <= n && n % 8 == 0) {
        wmma::store_matrix_sync(&P[row * n + col], c, n, wmma::mem_row_major);
        return;
    }
    wmma::store_matrix_sync(stage, c, 16, wmma::mem_row_major);
    __syncwarp();
    int lane = threadIdx.x % 32;
    for (int e = lane; e < 256; e += 32) {
        int r = row + e / 16, q = col + e % 16;
        if (r < m && q < n)
            P[r * n + q] = stage[e];
    }
    __syncwarp();                               // stage is read before it is written again
}

// ---------------------------------------------------------------------------------------
// matmul_wmma_tiled: a block of 4 warps (128 threads) computes a 64 x 64 tile of P,
// walking k in slices of TK; each warp, a 32 x 32 quarter of it, as 2 x 2 accumulators.
#define TT 64                                   // rows and columns of P per block
#define TK 32                                   // k per slice

extern "C" __global__ void __launch_bounds__(128)
matmul_wmma_tiled(const elem_t* M, const elem_t* N, float* P, int m, int k, int n) {
    __shared__ __align__(32) elem_t Ms[TT][TK];
    __shared__ __align__(32) elem_t Ns[TK][TT];
    __shared__ __align__(32) float stage[4][16 * 16];
    int tid = threadIdx.x, warp = tid / 32;
    int brow = blockIdx.y * TT, bcol = blockIdx.x * TT;
    int wrow = (warp / 2) * 32, wcol = (warp % 2) * 32;

    c_frag acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < k; k0 += TK) {
        // Each thread loads TT*TK/128 elements of each slice, zeros outside M and N.
        for (int e = tid; e < TT * TK; e += 128) {
            int r = e / TK, c = e % TK;
            Ms[r][c] = (brow + r < m && k0 + c < k) ? M[(brow + r) * k + k0 + c] : elem_t(0.0f);
            r = e / TT, c = e % TT;
            Ns[r][c] = (k0 + r < k && bcol + c < n) ? N[(k0 + r) * n + bcol + c] : elem_t(0.0f);
        }
        __syncthreads();
        for (int kk = 0; kk < TK; kk += FRAG_K) {
            a_frag a[2];
            b_frag b[2];
            for (int i = 0; i < 2; ++i) {
                wmma::load_matrix_sync(a[i], &Ms[wrow + 16 * i][kk], TK);
                round_to_precision(a[i]);
            }
            for (int j = 0; j < 2; ++j) {
                wmma::load_matrix_sync(b[j], &Ns[kk][wcol + 16 * j], TT);
                round_to_precision(b[j]);
            }
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            store_tile(P, m, n, brow + wrow + 16 * i, bcol + wcol + 16 * j, acc[i][j], stage[warp]);
}

// ---------------------------------------------------------------------------------------
// matmul_wmma_pipelined: a block of (BM/WM) x (BN/WN) warps computes a BM x BN tile of P;
// a warp, a WM x WN tile as (WM/16) x (WN/16) accumulators. Slices of k (BK wide) are
// copied asynchronously into STAGES stages of shared memory; rows are padded by PAD
// elements (16 bytes), which spreads the rows a fragment load reads over all the banks.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK (64 / (int)sizeof(elem_t))         // 64 bytes of k: 32 halves or 16 floats
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#define PAD VEC
#define THREADS (32 * (BM / WM) * (BN / WN))
#define MS_LD (BK + PAD)                        // leading dimensions in shared memory
#define NS_LD (BN + PAD)
#define STAGE_ELEMS (BM * MS_LD + BK * NS_LD)
#define STEPS (BK / FRAG_K)                     // fragment steps per slice
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles of whole fragments");
static_assert(BK % FRAG_K == 0 && BK % VEC == 0 && BN % VEC == 0, "whole fragments and 16-byte pieces");
static_assert(STAGES >= 2, "a pipeline has at least two stages");
static_assert(STEPS % 2 == 0, "an even number of steps per slice, so the two fragment buffers alternate");

// This thread's 16-byte pieces of a ROWS x COLS tile of X (rows x cols, row-major) whose
// corner is (r0, c0), into shared memory at dst (leading dimension LD). Consecutive threads
// take consecutive pieces of a row, so a thread's pieces lie in one column of pieces,
// STEP rows apart: one address is computed, and the others follow from it by a constant.
// Where cols is a multiple of VEC every piece is aligned and lies wholly inside X or wholly
// outside it: a tile wholly inside X (most of them) is copied with no test at all, and at
// an edge each piece is one asynchronous copy, zero-filling where it is outside. Otherwise
// X's rows are not 16-byte aligned, and the pieces are copied element by element,
// synchronously (the barrier before they are read orders them). The tests are made once
// per tile, not per piece, so that the common case compiles to a short straight run.
template <int ROWS, int COLS, int LD>
__device__ __forceinline__ void copy_tile(elem_t* dst, const elem_t* X, int rows, int cols, int r0, int c0) {
    constexpr int PER_ROW = COLS / VEC;         // pieces in a row of the tile
    constexpr int STEP = THREADS / PER_ROW;     // rows between one thread's pieces
    static_assert(THREADS % PER_ROW == 0 && ROWS % STEP == 0, "every thread copies the same number of pieces");
    int r = threadIdx.x / PER_ROW, c = threadIdx.x % PER_ROW * VEC;
    dst += r * LD + c;
    if (cols % VEC == 0 && r0 + ROWS <= rows && c0 + COLS <= cols) {
        const elem_t* src = X + (r0 + r) * cols + c0 + c;
        #pragma unroll
        for (int i = 0; i < ROWS / STEP; ++i)
            __pipeline_memcpy_async(dst + i * STEP * LD, src + i * STEP * cols, 16);
    } else if (cols % VEC == 0) {
        const elem_t* src = X + (r0 + r) * cols + c0 + c;
        bool column_inside = c0 + c < cols;
        #pragma unroll
        for (int i = 0; i < ROWS / STEP; ++i) {
            bool inside = column_inside && r0 + r + i * STEP < rows;
            __pipeline_memcpy_async(dst + i * STEP * LD, inside ? src + i * STEP * cols : X, 16, inside ? 0 : 16);
        }
    } else {
        for (int i = 0; i < ROWS / STEP; ++i)
            for (int e = 0; e < VEC; ++e) {
                int gr = r0 + r + i * STEP, gc = c0 + c + e;
                dst[i * STEP * LD + e] = gr < rows && gc < cols ? X[gr * cols + gc] : elem_t(0.0f);
            }
    }
}

// Slice `slice` of k (columns of M, rows of N) into its stage, as one committed batch
// (an empty one past the end of k, so that every step commits exactly one).
__device__ __forceinline__ void copy_slice(elem_t* smem, int slice, const elem_t* M, const elem_t* N,
                                           int m, int k, int n, int brow, int bcol) {
    int k0 = slice * BK;
    if (k0 < k) {
        elem_t* Ms = smem + (slice % STAGES) * STAGE_ELEMS;
        copy_tile<BM, BK, MS_LD>(Ms, M, m, k, brow, k0);
        copy_tile<BK, BN, NS_LD>(Ms + BM * MS_LD, N, k, n, k0, bcol);
    }
    __pipeline_commit();
}

// The fragments of one step of k (FRAG_K wide, at kk within a stage) for this warp's tile.
__device__ __forceinline__ void load_fragments(a_frag (&a)[WM / 16], b_frag (&b)[WN / 16], const elem_t* stage,
                                               int kk, int wrow, int wcol) {
    const elem_t* Ms = stage;
    const elem_t* Ns = stage + BM * MS_LD;
    #pragma unroll
    for (int i = 0; i < WM / 16; ++i) {
        wmma::load_matrix_sync(a[i], &Ms[(wrow + 16 * i) * MS_LD + kk], MS_LD);
        round_to_precision(a[i]);
    }
    #pragma unroll
    for (int j = 0; j < WN / 16; ++j) {
        wmma::load_matrix_sync(b[j], &Ns[kk * NS_LD + wcol + 16 * j], NS_LD);
        round_to_precision(b[j]);
    }
}

// The main loop is a software pipeline at two depths. Slices of k are copied STAGES - 1
// slices ahead of the one being multiplied. Within a slice, the fragments of the next step
// of k are loaded into registers (the second of two buffers) before the multiplies of this
// step are issued, so a warp's tensor-core work never waits on its own shared-memory loads;
// at the last step, the next slice is waited for and made visible by the barrier first, and
// its first fragments are loaded. The copy of a new slice is issued at the first step, into
// the stage the previous slice used: every warp has passed the barrier since reading it.
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_wmma_pipelined(const elem_t* M, const elem_t* N, float* P, int m, int k, int n) {
    extern __shared__ __align__(32) unsigned char smem_bytes[];
    elem_t* smem = reinterpret_cast<elem_t*>(smem_bytes);
    int warp = threadIdx.x / 32;
    int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    int wrow = (warp / (BN / WN)) * WM, wcol = (warp % (BN / WN)) * WN;

    c_frag acc[WM / 16][WN / 16];
    #pragma unroll
    for (int i = 0; i < WM / 16; ++i)
        #pragma unroll
        for (int j = 0; j < WN / 16; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);
    a_frag a[2][WM / 16];                       // two buffers: this step's and the next's
    b_frag b[2][WN / 16];

    int slices = (k + BK - 1) / BK;
    for (int s = 0; s < STAGES - 1; ++s)
        copy_slice(smem, s, M, N, m, k, n, brow, bcol);
    __pipeline_wait_prior(STAGES - 2);          // slice 0 has landed, for every thread
    __syncthreads();
    load_fragments(a[0], b[0], smem, 0, wrow, wcol);
    for (int t = 0; t < slices; ++t) {
        const elem_t* stage = smem + (t % STAGES) * STAGE_ELEMS;
        #pragma unroll
        for (int step = 0; step < STEPS; ++step) {
            int now = step % 2, next = 1 - now;
            if (step + 1 < STEPS) {
                load_fragments(a[next], b[next], stage, (step + 1) * FRAG_K, wrow, wcol);
            } else {
                __pipeline_wait_prior(STAGES - 2);  // this thread's copies of slice t+1 have landed
                __syncthreads();                    // everyone's have, and slice t is done with
                if (t + 1 < slices)
                    load_fragments(a[next], b[next], smem + ((t + 1) % STAGES) * STAGE_ELEMS, 0, wrow, wcol);
            }
            if (step == 0)
                copy_slice(smem, t + STAGES - 1, M, N, m, k, n, brow, bcol);
            #pragma unroll
            for (int i = 0; i < WM / 16; ++i)
                #pragma unroll
                for (int j = 0; j < WN / 16; ++j)
                    wmma::mma_sync(acc[i][j], a[now][i], b[now][j], acc[i][j]);
        }
    }
    __pipeline_wait_prior(0);
    __syncthreads();                            // the stages are free: each warp's 16 x 16 staging area
    float* stage = reinterpret_cast<float*>(smem_bytes) + warp * 16 * 16;
    #pragma unroll
    for (int i = 0; i < WM / 16; ++i)
        #pragma unroll
        for (int j = 0; j < WN / 16; ++j)
            store_tile(P, m, n, brow + wrow + 16 * i, bcol + wcol + 16 * j, acc[i][j], stage);
}
