// Ladder, rung 6: asynchronous copies in a pipeline of STAGES slices, blocks ordered for
// the L2 cache, and tiles chosen by measuring. P (m x n) = M (m x k) times N (k x n),
// row-major.
//
// The ideas beyond rung 5:
//  * Asynchronous copies (cp.async, compute capability 8.0 and later, through
//    __pipeline_memcpy_async). Rung 5 moved each slice of k through registers: load into
//    registers, compute, store to shared memory. An asynchronous copy goes from global to
//    shared memory without passing through the thread's registers, and the thread does
//    not wait for it: it commits a batch of copies, computes, and waits only when it needs
//    the batch (__pipeline_wait_prior(n): all but the newest n batches have landed). The
//    registers rung 5 spent on the slice in flight are free, and the copies need no
//    instructions between the multiply-adds to store them.
//  * A pipeline of STAGES slices. Shared memory holds STAGES slices of M and N; while the
//    block computes slice t, the copies of slices t+1 .. t+STAGES-1 are in flight. One
//    __syncthreads() per slice orders it all: after it, every thread's copies of slice t
//    have landed (each waited for its own before the barrier) and every thread has
//    finished computing slice t-1, whose copy of shared memory the copies issued next
//    then overwrite.
//  * M's slice is stored transposed, as in rung 5 (Ms[i][r] = M(r, i), rows padded by
//    MPAD), so the inner loop is rung 5's. A copy cannot transpose 16 bytes, so M moves
//    one float per copy: consecutive threads copy consecutive floats of a row of M
//    (coalesced reads) into one column of Ms. N's slice moves in 16-byte copies.
//  * Block order for the L2 cache. Blocks run roughly in the order of their index. Rung 5's
//    grid runs along a row of P's tiles first: the blocks that run together share one band
//    of M but need every column of N. Here each GROUP consecutive blocks go down a column
//    of tiles, then move one column right: blocks running together share bands of both.
//  * Tiles chosen by measuring: tiling_course.measure.tune compiled and timed 75 configurations
//    on an H100 and an H200 at 4096 beside cuBLAS; the defaults below were the fastest on
//    both. What it measured, and why this rung does not beat rung 5 with rung 5's best
//    tiles, is in logs/2026-11-23-h100-h200-rung6.md and chapter 6: the copies of M, one
//    float each, cost instructions and conflict in the banks. The block order did not
//    help at 4096: GROUP 1, the plain order, was the fastest by about 1%, so it is the
//    default. (Nothing here was tuned for Colab's T4, whose multiprocessors have 64 KiB
//    of shared memory: run the tuner there to find its tiles.)
//
// A block: (BM/WM) * (BN/WN) warps (8 by default), one-dimensional, computing a BM x BN
//   tile of P. A warp: a WM x WN tile, as in rung 5 (a 4 x 8 grid of threads, each with
//   TM x TN patches repeated WMITER x WNITER times).
// Shared memory: STAGES * (BK*(BM+MPAD) + BK*BN) floats, dynamic (the launch passes its
//   size; 49,664 bytes by default, over 48 KiB, so the launch opts in first).
//
// Any shape works: a copy of N moves 16 bytes where all four floats lie inside N and its
// row length is a multiple of 4 (so the address is 16-byte aligned), else one float at a
// time; what lies outside the matrix is zero-filled by the copy itself (its zfill
// argument), and nothing is written outside P.
// The launch: blocks of 32 * (BM/WM) * (BN/WN) threads, a grid of ceil(n/BN) x ceil(m/BM),
// STAGES * (BK*(BM+MPAD) + BK*BN) * 4 bytes of dynamic shared memory.
#include <cuda_pipeline.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef WNITER
#define WNITER 2
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef GROUP
#define GROUP 1
#endif
#ifndef MPAD
#define MPAD 4
#endif
#ifndef MINBLOCKS
#define MINBLOCKS 1
#endif
#define THREADS (32 * (BM / WM) * (BN / WN))
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define STAGE_FLOATS (BK * (BM + MPAD) + BK * BN)   // one slice of M (transposed, padded), one of N
#define COPIES_M (BM * BK / THREADS)       // floats of M's slice per thread
#define COPIES_N (BK * BN / 4 / THREADS)
static_assert(BM % WM == 0 && BN % WN == 0 && WM % WMITER == 0 && WN % WNITER == 0, "warp tiles tile the block");
static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a warp's 32 threads cover one WSUBM x WSUBN patch");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0 && MPAD % 4 == 0, "whole float4s");
static_assert(COPIES_M * THREADS == BM * BK && COPIES_N * THREADS * 4 == BK * BN, "slices split evenly");
static_assert(STAGES >= 2, "a pipeline has at least two stages");

// X(r, c) into shared memory at dst, asynchronously; 0.0f outside X (rows x cols).
__device__ __forceinline__ void copy_float(float* dst, const float* X, int rows, int cols, int r, int c) {
    bool inside = r < rows && c < cols;
    __pipeline_memcpy_async(dst, inside ? &X[r * cols + c] : X, 4, inside ? 0 : 4);
}

// The 16 bytes of N (rows x cols, row-major) at row r, columns c .. c+3 into shared memory
// at dst, asynchronously; zeros for what lies outside N. vec: cols is a multiple of 4 (and
// c is), so the four lie in one row, 16-byte aligned, all inside or all outside. A copy
// that reads nothing (zfill = its size) is given X itself as its source, a valid address.
__device__ __forceinline__ void copy_float4(float* dst, const float* X, int rows, int cols, int r, int c, bool vec) {
    if (vec) {
        bool inside = r < rows && c < cols;
        __pipeline_memcpy_async(dst, inside ? &X[r * cols + c] : X, 16, inside ? 0 : 16);
    } else {
        for (int e = 0; e < 4; ++e)
            copy_float(dst + e, X, rows, cols, r, c + e);
    }
}

// Slice `slice` of k (columns slice*BK.. of M's band, rows slice*BK.. of N's) into stage
// `stage` of shared memory, as one committed batch; an empty batch past the end of k, so
// that every thread always has the same number of batches in flight. M's slice is stored
// transposed, Ms[i][r] = M(brow + r, k0 + i), one float per copy: consecutive threads copy
// consecutive floats of a row of M (coalesced reads) into one column of Ms.
__device__ __forceinline__ void copy_slice(float* smem, int stage, int slice, const float* M, const float* N,
                                           int m, int k, int n, int brow, int bcol, bool nvec) {
    int k0 = slice * BK;
    if (k0 < k) {
        float* Ms = smem + stage * STAGE_FLOATS;
        float* Ns = Ms + BK * (BM + MPAD);
        #pragma unroll
        for (int j = 0; j < COPIES_M; ++j) {
            int f = threadIdx.x + j * THREADS;
            int r = f / BK, i = f % BK;
            copy_float(&Ms[i * (BM + MPAD) + r], M, m, k, brow + r, k0 + i);
        }
        #pragma unroll
        for (int j = 0; j < COPIES_N; ++j) {
            int f = threadIdx.x + j * THREADS;
            int r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            copy_float4(&Ns[r * BN + c], N, k, n, k0 + r, bcol + c, nvec);
        }
    }
    __pipeline_commit();
}

// One 16-byte access: the float4 at p, which must be 16-byte aligned (see rung 5).
template <class Ptr>
__device__ __forceinline__ float4 load4(const Ptr& p) { return reinterpret_cast<const float4*>(p)[0]; }
template <class Ptr>
__device__ __forceinline__ void store4(const Ptr& p, float4 v) { reinterpret_cast<float4*>(p)[0] = v; }

extern "C" __global__ void __launch_bounds__(THREADS, MINBLOCKS)
matmul_ladder6_pipelined(const float* M, const float* N, float* P, int m, int k, int n) {
    extern __shared__ __align__(16) float smem[];
    int tid = threadIdx.x;
    int warp = tid / 32, lane = tid % 32;
    int wrow = (warp / (BN / WN)) * WM;
    int wcol = (warp % (BN / WN)) * WN;
    int lrow = (lane / (WSUBN / TN)) * TM;
    int lcol = (lane % (WSUBN / TN)) * TN;

    // The tile of P this block computes: block b of the grid, counted in GROUP-row bands
    // that are walked down each column of tiles before the next column.
    int tiles_m = gridDim.y, tiles_n = gridDim.x;
    int b = blockIdx.y * tiles_n + blockIdx.x;
    int band = b / (GROUP * tiles_n), first = band * GROUP;
    int rows_in_band = min(GROUP, tiles_m - first);
    int in_band = b % (GROUP * tiles_n);
    int brow = (first + in_band % rows_in_band) * BM, bcol = (in_band / rows_in_band) * BN;
    bool nvec = n % 4 == 0;

    float sum[WMITER * TM][WNITER * TN];
    #pragma unroll
    for (int a = 0; a < WMITER * TM; ++a)
        #pragma unroll
        for (int c = 0; c < WNITER * TN; ++c)
            sum[a][c] = 0.0f;

    int slices = (k + BK - 1) / BK;
    for (int s = 0; s < STAGES - 1; ++s)
        copy_slice(smem, s, s, M, N, m, k, n, brow, bcol, nvec);

    for (int t = 0; t < slices; ++t) {
        __pipeline_wait_prior(STAGES - 2);   // this thread's copies of slice t have landed
        __syncthreads();                     // everyone's have, and slice t-1 is done with
        copy_slice(smem, (t + STAGES - 1) % STAGES, t + STAGES - 1, M, N, m, k, n, brow, bcol, nvec);

        const float* Ms = smem + (t % STAGES) * STAGE_FLOATS;
        const float* Ns = Ms + BK * (BM + MPAD);
        #pragma unroll
        for (int i = 0; i < BK; ++i) {       // rung 5's inner loop
            float mreg[WMITER * TM], nreg[WNITER * TN];
            #pragma unroll
            for (int wi = 0; wi < WMITER; ++wi)
                #pragma unroll
                for (int a = 0; a < TM; a += 4) {
                    float4 v = load4(&Ms[i * (BM + MPAD) + wrow + wi * WSUBM + lrow + a]);
                    mreg[wi * TM + a] = v.x; mreg[wi * TM + a + 1] = v.y;
                    mreg[wi * TM + a + 2] = v.z; mreg[wi * TM + a + 3] = v.w;
                }
            #pragma unroll
            for (int wj = 0; wj < WNITER; ++wj)
                #pragma unroll
                for (int c = 0; c < TN; c += 4) {
                    float4 v = load4(&Ns[i * BN + wcol + wj * WSUBN + lcol + c]);
                    nreg[wj * TN + c] = v.x; nreg[wj * TN + c + 1] = v.y;
                    nreg[wj * TN + c + 2] = v.z; nreg[wj * TN + c + 3] = v.w;
                }
            #pragma unroll
            for (int a = 0; a < WMITER * TM; ++a)
                #pragma unroll
                for (int c = 0; c < WNITER * TN; ++c)
                    sum[a][c] += mreg[a] * nreg[c];
        }
    }
    __pipeline_wait_prior(0);                // the empty batches past the end of k

    #pragma unroll
    for (int wi = 0; wi < WMITER; ++wi)
        #pragma unroll
        for (int a = 0; a < TM; ++a)
            #pragma unroll
            for (int wj = 0; wj < WNITER; ++wj)
                #pragma unroll
                for (int c = 0; c < TN; c += 4) {
                    int row = brow + wrow + wi * WSUBM + lrow + a;
                    int col = bcol + wcol + wj * WSUBN + lcol + c;
                    const float* s = sum[wi * TM + a] + wj * TN + c;
                    if (row >= m) continue;
                    if (nvec && col < n) {
                        store4(&P[row * n + col], make_float4(s[0], s[1], s[2], s[3]));
                    } else {
                        for (int e = 0; e < 4; ++e)
                            if (col + e < n) P[row * n + col + e] = s[e];
                    }
                }
}
