// Ladder, rung 5: warp tiling and double buffering. P (m x n) = M (m x k) times N (k x n),
// row-major.
//
// The ideas beyond rung 4, all about keeping the multiply-add units busy:
//  * Warp tiling. The block's tile of P is split into warp tiles (WM x WN), and a warp's
//    32 threads are laid out over its warp tile so that the float4 reads of the inner
//    loop hit shared memory almost without bank conflicts: a warp is a grid of
//    (WSUBM/TM) x (WSUBN/TN) = 4 x 8 threads, each owning a TM x TN = 4 x 4 patch, and
//    this 16 x 32 pattern repeats WMITER x WNITER times over the warp tile. Eight threads
//    that read N together read 8 different, adjacent float4 (128 bytes, every bank once);
//    threads that read M together mostly read the same float4 (one broadcast). In rung 4 a
//    thread's 8 x 8 patch was contiguous, so neighbouring threads read float4s 32 bytes
//    apart: two passes through the banks for every read of N.
//  * Double buffering. There are two copies of each shared tile. While the block computes
//    from one, each thread has already issued the global loads of the next slice of k
//    into registers; it stores them into the other copy when its computation is done.
//    The load latency hides behind the arithmetic, and one __syncthreads() per slice of
//    k suffices instead of two (a copy is overwritten only one barrier after its last
//    read, and read only one barrier after it is written).
//  * Padding. Mds's rows are MPAD floats longer than BM. One transposing store of a warp
//    writes 8 columns r of Mds in 4 rows (c, c+4, c+8, c+12 for BK = 16); unpadded, the
//    rows are BM = 128 floats apart, a multiple of the 32 banks, so the four rows' column
//    r share a bank (4-way conflicts); with MPAD 4, 2-way. (MPAD stays a multiple of 4:
//    rows of Mds must start 16-byte aligned for the float4 reads.)
//
// A block: (BM/WM) * (BN/WN) warps (8 by default: 256 threads), one-dimensional,
//   computing a BM x BN (128 x 128) tile of P, walking k in steps of BK (16: on an H200
//   10% faster than 8, fewer barriers per multiply-add).
// A warp: a WM x WN (32 x 64) tile of the block's tile. A thread: WMITER x WNITER
//   (2 x 2) patches of TM x TN (4 x 4), WSUBM (16) rows and WSUBN (32) columns apart:
//   TM*TN*WMITER*WNITER = 64 elements of P.
// Shared memory: two copies of Mds (M's BM x BK slice, transposed, padded) and of Nds
//   (N's BK x BN slice): 2 * BK * (BM + MPAD + BN) floats, 32.5 KB by default.
// Registers: the 64 running sums; WMITER*TM values of M and WNITER*TN of N for the
//   current step; the float4s of the next slice in flight (BM*BK/4 / threads of M and
//   BK*BN/4 / threads of N, two each by default). __launch_bounds__(THREADS, MINBLOCKS)
//   caps them at 128 per thread, so that two blocks (16 warps) fit on an SM of an H100
//   or H200. On a T4 the registers would allow two as well, but two blocks need 66,560
//   bytes of shared memory and its SM has 65,536: one block runs per SM.
//
// Any shape works, with the edge handling of rung 4: float4 accesses only where whole
// and aligned (row length a multiple of 4, all four elements inside), one float at a
// time elsewhere, zeros outside M and N, nothing written outside P.
// The launch: blocks of 32 * (BM/WM) * (BN/WN) threads, a grid of ceil(n/BN) x ceil(m/BM).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 32
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
#ifndef MPAD
#define MPAD 4
#endif
#ifndef MINBLOCKS
#define MINBLOCKS 2
#endif
#define THREADS (32 * (BM / WM) * (BN / WN))
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define LOADS_M (BM * BK / 4 / THREADS)   // float4 of M's slice per thread
#define LOADS_N (BK * BN / 4 / THREADS)   // float4 of N's slice per thread
static_assert(BM % WM == 0 && BN % WN == 0 && WM % WMITER == 0 && WN % WNITER == 0, "warp tiles tile the block");
static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a warp's 32 threads cover one WSUBM x WSUBN patch");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0 && MPAD % 4 == 0, "whole float4s");
static_assert(LOADS_M * THREADS * 4 == BM * BK && LOADS_N * THREADS * 4 == BK * BN, "slices split evenly");

// One 16-byte access: the float4 at p, which must be 16-byte aligned. (p is taken by
// const reference through a template so that checked mode, where p is a checked
// pointer object rather than a float*, can route the cast through its bounds check.)
template <class Ptr>
__device__ __forceinline__ float4 load4(const Ptr& p) { return reinterpret_cast<const float4*>(p)[0]; }
template <class Ptr>
__device__ __forceinline__ void store4(const Ptr& p, float4 v) { reinterpret_cast<float4*>(p)[0] = v; }

// X (rows x cols, row-major) at row r, columns c .. c+3, as a float4; zeros outside X.
// vec: cols is a multiple of 4 (and c is), so the four lie in one row, 16-byte aligned.
__device__ __forceinline__ float4 load_float4(const float* X, int rows, int cols, int r, int c, bool vec) {
    float4 v;
    if (vec && r < rows && c < cols) {
        v = load4(&X[r * cols + c]);
    } else {
        v.x = (r < rows && c < cols) ? X[r * cols + c] : 0.0f;
        v.y = (r < rows && c + 1 < cols) ? X[r * cols + c + 1] : 0.0f;
        v.z = (r < rows && c + 2 < cols) ? X[r * cols + c + 2] : 0.0f;
        v.w = (r < rows && c + 3 < cols) ? X[r * cols + c + 3] : 0.0f;
    }
    return v;
}

// v into X at row r, columns c .. c+3: the elements inside X only.
__device__ __forceinline__ void store_float4(float* X, int rows, int cols, int r, int c, bool vec, float4 v) {
    if (vec && r < rows && c < cols) {
        store4(&X[r * cols + c], v);
    } else if (r < rows) {
        if (c < cols) X[r * cols + c] = v.x;
        if (c + 1 < cols) X[r * cols + c + 1] = v.y;
        if (c + 2 < cols) X[r * cols + c + 2] = v.z;
        if (c + 3 < cols) X[r * cols + c + 3] = v.w;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINBLOCKS)
matmul_ladder5_warptiled(const float* M, const float* N, float* P, int m, int k, int n) {
    __align__(16) __shared__ float Mds[2][BK][BM + MPAD];   // transposed: Mds[.][i][r] = M tile (r, i)
    __align__(16) __shared__ float Nds[2][BK][BN];
    int tid = threadIdx.x;
    int warp = tid / 32, lane = tid % 32;
    int wrow = (warp / (BN / WN)) * WM;             // the warp's tile within the block's tile
    int wcol = (warp % (BN / WN)) * WN;
    int lrow = (lane / (WSUBN / TN)) * TM;          // the thread's patch within a WSUBM x WSUBN one
    int lcol = (lane % (WSUBN / TN)) * TN;
    int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    bool mvec = k % 4 == 0, nvec = n % 4 == 0;

    float sum[WMITER * TM][WNITER * TN];
    float mreg[WMITER * TM], nreg[WNITER * TN];
    float4 mnext[LOADS_M], nnext[LOADS_N];          // the next slice of k, on its way
    #pragma unroll
    for (int a = 0; a < WMITER * TM; ++a)
        #pragma unroll
        for (int b = 0; b < WNITER * TN; ++b)
            sum[a][b] = 0.0f;

    // Which float4 of a slice thread tid moves: the j-th is number tid + j * THREADS,
    // counted along rows (BK/4 per row of M's slice, BN/4 per row of N's).
    #pragma unroll
    for (int j = 0; j < LOADS_M; ++j) {
        int f = tid + j * THREADS;
        mnext[j] = load_float4(M, m, k, brow + f / (BK / 4), (f % (BK / 4)) * 4, mvec);
    }
    #pragma unroll
    for (int j = 0; j < LOADS_N; ++j) {
        int f = tid + j * THREADS;
        nnext[j] = load_float4(N, k, n, f / (BN / 4), bcol + (f % (BN / 4)) * 4, nvec);
    }

    // The first slice into shared copy 0.
    #pragma unroll
    for (int j = 0; j < LOADS_M; ++j) {
        int f = tid + j * THREADS;
        int r = f / (BK / 4), c = (f % (BK / 4)) * 4;
        Mds[0][c + 0][r] = mnext[j].x;
        Mds[0][c + 1][r] = mnext[j].y;
        Mds[0][c + 2][r] = mnext[j].z;
        Mds[0][c + 3][r] = mnext[j].w;
    }
    #pragma unroll
    for (int j = 0; j < LOADS_N; ++j) {
        int f = tid + j * THREADS;
        store4(&Nds[0][f / (BN / 4)][(f % (BN / 4)) * 4], nnext[j]);
    }
    __syncthreads();

    int buf = 0;                                    // the copy that holds slice k0
    for (int k0 = 0; k0 < k; k0 += BK) {
        bool more = k0 + BK < k;
        // Issue the global loads of the next slice; they complete while we compute.
        if (more) {
            #pragma unroll
            for (int j = 0; j < LOADS_M; ++j) {
                int f = tid + j * THREADS;
                mnext[j] = load_float4(M, m, k, brow + f / (BK / 4), k0 + BK + (f % (BK / 4)) * 4, mvec);
            }
            #pragma unroll
            for (int j = 0; j < LOADS_N; ++j) {
                int f = tid + j * THREADS;
                nnext[j] = load_float4(N, k, n, k0 + BK + f / (BN / 4), bcol + (f % (BN / 4)) * 4, nvec);
            }
        }
        // Compute slice k0 from copy buf.
        #pragma unroll
        for (int i = 0; i < BK; ++i) {
            #pragma unroll
            for (int wi = 0; wi < WMITER; ++wi)
                #pragma unroll
                for (int t = 0; t < TM; t += 4) {
                    float4 v = load4(&Mds[buf][i][wrow + wi * WSUBM + lrow + t]);
                    mreg[wi * TM + t] = v.x; mreg[wi * TM + t + 1] = v.y;
                    mreg[wi * TM + t + 2] = v.z; mreg[wi * TM + t + 3] = v.w;
                }
            #pragma unroll
            for (int wj = 0; wj < WNITER; ++wj)
                #pragma unroll
                for (int t = 0; t < TN; t += 4) {
                    float4 v = load4(&Nds[buf][i][wcol + wj * WSUBN + lcol + t]);
                    nreg[wj * TN + t] = v.x; nreg[wj * TN + t + 1] = v.y;
                    nreg[wj * TN + t + 2] = v.z; nreg[wj * TN + t + 3] = v.w;
                }
            #pragma unroll
            for (int a = 0; a < WMITER * TM; ++a)
                #pragma unroll
                for (int b = 0; b < WNITER * TN; ++b)
                    sum[a][b] += mreg[a] * nreg[b];
        }
        // The next slice into the other copy. Its last reads were in the previous
        // iteration, before the barrier that ended it; its next reads come after the
        // barrier below.
        if (more) {
            #pragma unroll
            for (int j = 0; j < LOADS_M; ++j) {
                int f = tid + j * THREADS;
                int r = f / (BK / 4), c = (f % (BK / 4)) * 4;
                Mds[buf ^ 1][c + 0][r] = mnext[j].x;
                Mds[buf ^ 1][c + 1][r] = mnext[j].y;
                Mds[buf ^ 1][c + 2][r] = mnext[j].z;
                Mds[buf ^ 1][c + 3][r] = mnext[j].w;
            }
            #pragma unroll
            for (int j = 0; j < LOADS_N; ++j) {
                int f = tid + j * THREADS;
                store4(&Nds[buf ^ 1][f / (BN / 4)][(f % (BN / 4)) * 4], nnext[j]);
            }
        }
        __syncthreads();
        buf ^= 1;
    }

    #pragma unroll
    for (int wi = 0; wi < WMITER; ++wi)
        #pragma unroll
        for (int a = 0; a < TM; ++a)
            #pragma unroll
            for (int wj = 0; wj < WNITER; ++wj)
                #pragma unroll
                for (int b = 0; b < TN; b += 4) {
                    int row = brow + wrow + wi * WSUBM + lrow + a;
                    int col = bcol + wcol + wj * WSUBN + lcol + b;
                    int sa = wi * TM + a, sb = wj * TN + b;
                    store_float4(P, m, n, row, col, nvec,
                                 make_float4(sum[sa][sb], sum[sa][sb + 1], sum[sa][sb + 2], sum[sa][sb + 3]));
                }
}
