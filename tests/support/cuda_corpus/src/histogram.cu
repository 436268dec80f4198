// Histograms as PMPP ch. 9 and the CUDA samples (histogram64/256) teach them: global
// atomics, privatized shared copies merged at the end, per-warp sub-histograms, byte
// input read four at a time, aggregation of runs, and atomicInc's wrap-around.

#ifndef NUM_BINS
#define NUM_BINS 64
#endif

typedef unsigned int uint;
typedef unsigned char uchar;

// Global atomics, grid-stride loop.
extern "C" __global__ void histo_global(const int* data, uint* bins, int n) {
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&bins[data[i]], 1u);
}

// Privatized: a shared copy cleared by a strided loop, atomics on it, merged with one
// global atomic per nonzero bin.
extern "C" __global__ void histo_privatized(const int* data, uint* bins, int n) {
    __shared__ uint s_hist[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) s_hist[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_hist[data[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        uint c = s_hist[b];
        if (c) atomicAdd(&bins[b], c);
    }
}

// The same, cleared with memset by one thread (sizeof the array) and counting in
// unsigned long long.
extern "C" __global__ void histo_memset(const int* data, unsigned long long* bins, int n) {
    __shared__ unsigned long long s_hist[NUM_BINS];
    if (threadIdx.x == 0) memset(s_hist, 0, sizeof(s_hist));
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&s_hist[data[i]], 1ull);
    __syncthreads();
    for (int b = threadIdx.x; b < (int)(sizeof(s_hist) / sizeof(s_hist[0])); b += blockDim.x)
        atomicAdd(&bins[b], s_hist[b]);
}

// One sub-histogram per warp (fewer collisions), summed over the warps at the end.
#define WARPS 4
extern "C" __global__ void histo_per_warp(const int* data, uint* bins, int n) {
    __shared__ uint s_warp[WARPS][NUM_BINS];
    int warp = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    for (int b = lane; b < NUM_BINS; b += 32) s_warp[warp][b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_warp[warp][data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        uint sum = 0;
        for (int w = 0; w < WARPS; ++w) sum += s_warp[w][b];
        atomicAdd(&bins[b], sum);
    }
}

// PMPP's text histogram: lower-case letters into bins of four letters (a-d, e-h, ...),
// bytes read four at a time through a uchar4 cast, the tail one by one.
__device__ __forceinline__ void count_letter(uchar c, uint* h) {
    int pos = c - 'a';
    if (pos >= 0 && pos < 26) atomicAdd(&h[pos / 4], 1u);
}

extern "C" __global__ void histo_text(const uchar* text, uint* bins, int n) {
    __shared__ uint h[7];
    if (threadIdx.x < 7) h[threadIdx.x] = 0;
    __syncthreads();
    int n4 = n / 4;
    const uchar4* text4 = (const uchar4*)text;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n4; k += blockDim.x * gridDim.x) {
        uchar4 q = text4[k];
        count_letter(q.x, h);
        count_letter(q.y, h);
        count_letter(q.z, h);
        count_letter(q.w, h);
    }
    int tail = 4 * n4 + blockIdx.x * blockDim.x + threadIdx.x;
    if (tail < n) count_letter(text[tail], h);
    __syncthreads();
    if (threadIdx.x < 7) atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}

// PMPP 9.7: aggregation. Each thread walks a contiguous range and only flushes its
// count when the bin changes, so runs of equal values cost one atomic.
extern "C" __global__ void histo_aggregate(const int* data, uint* bins, int n, int per_thread) {
    __shared__ uint s_hist[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) s_hist[b] = 0u;
    __syncthreads();
    int begin = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
    int end = min(begin + per_thread, n);
    int prev = -1;
    uint accumulator = 0;
    for (int i = begin; i < end; ++i) {
        int bin = data[i];
        if (bin == prev) {
            ++accumulator;
        } else {
            if (accumulator > 0) atomicAdd(&s_hist[prev], accumulator);
            accumulator = 1;
            prev = bin;
        }
    }
    if (accumulator > 0) atomicAdd(&s_hist[prev], accumulator);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (s_hist[b]) atomicAdd(&bins[b], s_hist[b]);
}

// Ring counters: atomicInc(&c, limit) counts 0, 1, ..., limit, 0, ... so each bin ends
// at its count modulo limit + 1, in whatever order the increments come.
extern "C" __global__ void histo_ring_counters(const int* data, uint* ring, uint limit, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicInc(&ring[data[i]], limit);
}

// A 2-D histogram of points in the unit square, float2 input, clamped bin indices,
// privatized in a [BY][BX] shared array.
#define BX 16
#define BY 8
extern "C" __global__ void histo_2d(const float2* pts, uint* bins, int n) {
    __shared__ uint s_hist[BY][BX];
    for (int k = threadIdx.x; k < BX * BY; k += blockDim.x) s_hist[k / BX][k % BX] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int bx = min((int)(pts[i].x * BX), BX - 1);
        int by = min((int)(pts[i].y * BY), BY - 1);
        atomicAdd(&s_hist[by][bx], 1u);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < BX * BY; k += blockDim.x) {
        int col = k;
        col %= BX;
        atomicAdd(&bins[k], s_hist[k / BX][col]);
    }
}
