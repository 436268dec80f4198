// Ladder, rung 3: 2-D register tiling. P (m x n) = M (m x k) times N (k x n), row-major.
//
// The one idea beyond rung 2: each thread computes a TM x TN patch of P, not a strip of
// one column. For each step i of the dot products it copies TM values of M (from a
// column of the M tile) and TN values of N (from a row of the N tile) from shared memory
// into registers, then does their outer product: TM * TN multiply-adds from TM + TN
// shared reads (64 from 16 with 8 x 8), where rung 2 needed TM + 1 reads for TM
// multiply-adds.
//
// A block: (BM / TM) * (BN / TN) threads (256 by default), one-dimensional, seen as a
//   (BN/TN) x (BM/TM) grid (tx, ty), computing a BM x BN (128 x 128) tile of P, walking
//   k in steps of BK (8).
// A thread: rows ty + a * (BM/TM) and columns tx + b * (BN/TN) of the tile, a < TM,
//   b < TN: its TM x TN elements are spread over the tile, every (BM/TM)-th row and
//   (BN/TN)-th column, so that the threads of a warp read neighbouring words of shared
//   memory (different banks) or the same word (a broadcast), never two words of one bank.
// Shared memory: Mds, the BM x BK slice of M, and Nds, the BK x BN slice of N; every
//   thread loads BM*BK / threads elements of each (4 by default), one float at a time.
// Registers: the TM x TN running sums, the TM values of M and the TN values of N of the
//   current step.
//
// Any shape works: elements outside M or N load as 0.0f, only elements inside P are
// written. The launch: blocks of BM*BN/(TM*TN) threads, a grid of ceil(n/BN) x ceil(m/BM).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_ladder3_regtile2d(const float* M, const float* N, float* P, int m, int k, int n) {
    __shared__ float Mds[BM][BK];
    __shared__ float Nds[BK][BN];
    int tid = threadIdx.x;
    int tx = tid % (BN / TN), ty = tid / (BN / TN);   // rows ty + a * (BM/TM), columns tx + b * (BN/TN)
    int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;

    float sum[TM][TN];
    float mreg[TM], nreg[TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j)
            sum[i][j] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += BK) {
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
        #pragma unroll
        for (int i = 0; i < BK; ++i) {
            // Registers first: a column of M's tile and a row of N's tile ...
            #pragma unroll
            for (int t = 0; t < TM; ++t)
                mreg[t] = Mds[ty + t * (BM / TM)][i];
            #pragma unroll
            for (int t = 0; t < TN; ++t)
                nreg[t] = Nds[i][tx + t * (BN / TN)];
            // ... then their outer product, all from registers.
            #pragma unroll
            for (int a = 0; a < TM; ++a)
                #pragma unroll
                for (int b = 0; b < TN; ++b)
                    sum[a][b] += mreg[a] * nreg[b];
        }
        __syncthreads();
    }

    #pragma unroll
    for (int a = 0; a < TM; ++a) {
        int row = brow + ty + a * (BM / TM);
        #pragma unroll
        for (int b = 0; b < TN; ++b) {
            int col = bcol + tx + b * (BN / TN);
            if (row < m && col < n)
                P[row * n + col] = sum[a][b];
        }
    }
}
