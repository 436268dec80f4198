// Ladder, rung 2: 1-D register tiling with block tiling. P (m x n) = M (m x k) times
// N (k x n), row-major.
//
// The one idea beyond rung 1: the three sizes of a block's work are chosen apart. In
// rung 1 one number, TILE, was the height and width of the block's tile of P and also
// the step along k; here a block computes a BM x BN tile of P walking k in steps of BK,
// and each thread computes TM consecutive elements of one column of that tile, TM as
// large as registers allow (16, four times rung 1's COARSE). For each step i of the dot
// products a thread reads N's value once into a register and then M's TM values, which
// every thread of its warp reads too (one broadcast each): TM multiply-adds for TM + 1
// shared reads. The k-step BK is short (16), so the shared tiles stay small however
// large the tile of P, whose size sets how often each value is loaded from global memory.
//
// A block: BM * BN / TM threads (256 by default), one-dimensional, computing BM x BN
//   (64 x 64) of P.
// A thread: column tid % BN of the tile, rows (tid / BN) * TM ... + TM - 1.
// Shared memory: Mds, the BM x BK slice of M, and Nds, the BK x BN slice of N; every
//   thread loads BM*BK / threads elements of the first and BK*BN / threads of the second
//   (4 of each by default).
// Registers: the TM running sums, and the value of N in use.
//
// Any shape works: elements outside M or N load as 0.0f, only elements inside P are
// written. The launch: blocks of BM*BN/TM threads, a grid of ceil(n/BN) x ceil(m/BM).
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 16
#endif
#define THREADS (BM * BN / TM)

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_ladder2_regtile1d(const float* M, const float* N, float* P, int m, int k, int n) {
    __shared__ float Mds[BM][BK];
    __shared__ float Nds[BK][BN];
    int tid = threadIdx.x;
    int tcol = tid % BN;             // this thread's column in the tile
    int trow = (tid / BN) * TM;      // its first row in the tile
    int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;

    float sum[TM];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        sum[i] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += BK) {
        // Load: consecutive threads take consecutive elements of a row, so the reads of
        // global memory are coalesced along rows of M and of N.
        for (int e = tid; e < BM * BK; e += THREADS) {
            int r = e / BK, c = e % BK;
            int mrow = brow + r, mcol = k0 + c;
            Mds[r][c] = (mrow < m && mcol < k) ? M[mrow * k + mcol] : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            int r = e / BN, c = e % BN;
            int nrow = k0 + r, ncol = bcol + c;
            Nds[r][c] = (nrow < k && ncol < n) ? N[nrow * n + ncol] : 0.0f;
        }
        __syncthreads();
        // Compute: the value of N is read once per step and used TM times. The threads
        // of a warp share trow, so their reads of Mds are one broadcast.
        #pragma unroll
        for (int i = 0; i < BK; ++i) {
            float nval = Nds[i][tcol];
            #pragma unroll
            for (int t = 0; t < TM; ++t)
                sum[t] += Mds[trow + t][i] * nval;
        }
        __syncthreads();
    }

    int col = bcol + tcol;
    #pragma unroll
    for (int t = 0; t < TM; ++t) {
        int row = brow + trow + t;
        if (row < m && col < n)
            P[row * n + col] = sum[t];
    }
}
