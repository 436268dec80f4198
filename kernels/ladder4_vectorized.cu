// Ladder, rung 4: vectorized loads, with M's tile stored transposed. P (m x n) = M (m x k)
// times N (k x n), row-major.
//
// The one idea beyond rung 3: move data four floats at a time. Each thread reads M and N
// from global memory as float4 (one 16-byte load instead of four 4-byte ones) and writes
// P as float4. M's tile is stored transposed in shared memory (Mds[i][r] holds M's
// element (r, i) of the tile), so that the TM values of M a thread needs for step i of
// the dot products lie side by side, like the TN values of N: the inner loop then reads
// both from shared memory as float4 too (TM/4 + TN/4 16-byte reads per step).
//
// A block: (BM / TM) * (BN / TN) threads (256 by default), one-dimensional, computing a
//   BM x BN (128 x 128) tile of P, walking k in steps of BK (8).
// A thread: rows (tid / (BN/TN)) * TM ... + TM - 1 and columns (tid % (BN/TN)) * TN
//   ... + TN - 1 of the tile: a contiguous patch now, not rung 3's spread one, since a
//   float4 read from shared memory must hold four values of one thread. The price:
//   neighbouring threads read float4s TN floats apart, and 8 threads reading 8 float4s
//   spread over 256 bytes need two passes through the 32 banks (rung 5 fixes that).
// Shared memory: Mds, the BM x BK slice of M, transposed (BK x BM), and Nds, the BK x BN
//   slice of N; every thread loads BM*BK/4 / threads float4 of M (one by default) and
//   as many of N.
// Registers: the TM x TN running sums, TM values of M and TN of N for the current step.
//
// Any shape works. A float4 is read or written only where it is whole and aligned: the
// row length (k for M, n for N and P) must be a multiple of 4, so that every row starts
// on a 16-byte boundary (the arrays themselves start on one, as every cudaMalloc, CuPy and
// NumPy allocation does), and all four elements must lie inside the matrix. Anywhere else
// (the edges of odd shapes) the same four elements are read one at a time, those outside
// the matrix as 0.0f, and written one at a time, those outside P not at all.
// The launch: blocks of BM*BN/(TM*TN) threads, a grid of ceil(n/BN) x ceil(m/BM).
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
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0, "tiles hold whole float4s");

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

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_ladder4_vectorized(const float* M, const float* N, float* P, int m, int k, int n) {
    __align__(16) __shared__ float Mds[BK][BM];   // transposed: Mds[i][r] = tile of M at (r, i)
    __align__(16) __shared__ float Nds[BK][BN];
    int tid = threadIdx.x;
    int trow = (tid / (BN / TN)) * TM;
    int tcol = (tid % (BN / TN)) * TN;
    int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    bool mvec = k % 4 == 0, nvec = n % 4 == 0;    // may rows of M, of N and P be read as float4?

    float sum[TM][TN];
    float mreg[TM], nreg[TN];
    #pragma unroll
    for (int a = 0; a < TM; ++a)
        #pragma unroll
        for (int b = 0; b < TN; ++b)
            sum[a][b] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += BK) {
        // Load M's tile a float4 (four consecutive columns of one row) at a time, and
        // store the four into four rows of Mds: the transpose.
        for (int f = tid; f < BM * BK / 4; f += THREADS) {
            int r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            float4 v = load_float4(M, m, k, brow + r, k0 + c, mvec);
            Mds[c + 0][r] = v.x;
            Mds[c + 1][r] = v.y;
            Mds[c + 2][r] = v.z;
            Mds[c + 3][r] = v.w;
        }
        // N's tile keeps its layout: a float4 of a row of N is a float4 of a row of Nds.
        for (int f = tid; f < BK * BN / 4; f += THREADS) {
            int r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            float4 v = load_float4(N, k, n, k0 + r, bcol + c, nvec);
            store4(&Nds[r][c], v);
        }
        __syncthreads();
        #pragma unroll
        for (int i = 0; i < BK; ++i) {
            // TM values of M and TN of N, four per 16-byte shared-memory read.
            #pragma unroll
            for (int t = 0; t < TM; t += 4) {
                float4 v = load4(&Mds[i][trow + t]);
                mreg[t] = v.x; mreg[t + 1] = v.y; mreg[t + 2] = v.z; mreg[t + 3] = v.w;
            }
            #pragma unroll
            for (int t = 0; t < TN; t += 4) {
                float4 v = load4(&Nds[i][tcol + t]);
                nreg[t] = v.x; nreg[t + 1] = v.y; nreg[t + 2] = v.z; nreg[t + 3] = v.w;
            }
            #pragma unroll
            for (int a = 0; a < TM; ++a)
                #pragma unroll
                for (int b = 0; b < TN; ++b)
                    sum[a][b] += mreg[a] * nreg[b];
        }
        __syncthreads();
    }

    #pragma unroll
    for (int a = 0; a < TM; ++a)
        #pragma unroll
        for (int b = 0; b < TN; b += 4)
            store_float4(P, m, n, brow + trow + a, bcol + tcol + b, nvec,
                         make_float4(sum[a][b], sum[a][b + 1], sum[a][b + 2], sum[a][b + 3]));
}
