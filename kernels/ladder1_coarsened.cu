// Ladder, rung 1: thread coarsening. P (m x n) = M (m x k) times N (k x n), row-major.
//
// The one idea: each thread computes COARSE elements of P instead of one, all in one
// column, TILE/COARSE rows apart. The value of N it needs for one step of the dot products
// is the same for all of them, so it is read from shared memory once and used COARSE
// times from a register.
//
// A block is TILE x (TILE / COARSE) threads and computes a TILE x TILE tile of P.
// Thread (tx, ty) computes the elements (ty + c * TILE/COARSE, tx), c = 0 .. COARSE-1.
// Shared memory: one TILE x TILE tile of M and one of N per phase, as in the tiled
//   kernel; each thread loads COARSE elements of each.
// Registers: the COARSE running sums, and the one value of N in use.
//
// Every shape works: elements outside M or N load as 0.0f, only elements inside P are
// written (as in tiled_bounds.cu). The launch: blocks of (TILE, TILE/COARSE) threads,
// a grid of ceil(n / TILE) x ceil(m / TILE) blocks.
#ifndef TILE
#define TILE 32
#endif
#ifndef COARSE
#define COARSE 4
#endif
#define ROWS (TILE / COARSE)   // threads along y; also the distance between a thread's rows

extern "C" __global__ void __launch_bounds__(TILE * ROWS)
matmul_ladder1_coarsened(const float* M, const float* N, float* P, int m, int k, int n) {
    __shared__ float Mds[TILE][TILE];
    __shared__ float Nds[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * TILE + ty;   // this thread's first row; the others follow ROWS apart
    int col = blockIdx.x * TILE + tx;

    float sum[COARSE];
    #pragma unroll
    for (int c = 0; c < COARSE; ++c)
        sum[c] = 0.0f;

    for (int ph = 0; ph < (k + TILE - 1) / TILE; ++ph) {
        // Load: each thread fills COARSE elements of each tile, rows ROWS apart.
        #pragma unroll
        for (int c = 0; c < COARSE; ++c) {
            int r = ty + c * ROWS;                   // row within the tile
            int mrow = blockIdx.y * TILE + r, mcol = ph * TILE + tx;
            int nrow = ph * TILE + r;
            Mds[r][tx] = (mrow < m && mcol < k) ? M[mrow * k + mcol] : 0.0f;
            Nds[r][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        }
        __syncthreads();
        // Compute: one read of N serves COARSE multiply-adds.
        #pragma unroll
        for (int i = 0; i < TILE; ++i) {
            float nval = Nds[i][tx];
            #pragma unroll
            for (int c = 0; c < COARSE; ++c)
                sum[c] += Mds[ty + c * ROWS][i] * nval;
        }
        __syncthreads();
    }

    #pragma unroll
    for (int c = 0; c < COARSE; ++c) {
        int row = row0 + c * ROWS;
        if (row < m && col < n)
            P[row * n + col] = sum[c];
    }
}
