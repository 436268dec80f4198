// Histograms in the styles of PMPP ch. 9 and the CUDA samples: global atomics, privatized
// shared-memory copies, per-warp copies, aggregation of runs, and counting with wrap-around.
#define NUM_BINS 64

extern "C" __global__ void histo_global(const unsigned char* data, unsigned int* histo, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (; i < n; i += stride) atomicAdd(&histo[data[i] % NUM_BINS], 1u);
}

extern "C" __global__ void histo_privatized(const unsigned char* data, unsigned int* histo, int n) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) histo_s[b] = 0u;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&histo_s[data[i] % NUM_BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int v = histo_s[b];
        if (v > 0) atomicAdd(&histo[b], v);
    }
}

// One sub-histogram per warp, merged at the end.
extern "C" __global__ void histo_per_warp(const int* keys, unsigned int* histo, int n) {
    extern __shared__ unsigned int warp_hist[];   // (blockDim.x / 32) * NUM_BINS
    int warps = blockDim.x / 32, warp = threadIdx.x / 32;
    for (int b = threadIdx.x; b < warps * NUM_BINS; b += blockDim.x) warp_hist[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int key = keys[i] & (NUM_BINS - 1);
        atomicAdd(&warp_hist[warp * NUM_BINS + key], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int total = 0;
        for (int w = 0; w < warps; ++w) total += warp_hist[w * NUM_BINS + b];
        atomicAdd(&histo[b], total);
    }
}

// Aggregation (PMPP 9.6): consecutive equal values become one atomic per run.
extern "C" __global__ void histo_aggregated(const unsigned char* data, unsigned int* histo, int n) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) histo_s[b] = 0u;
    __syncthreads();
    unsigned int accumulator = 0;
    int prev = -1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int bin = data[i] / 4;
        if (bin == prev) {
            ++accumulator;
        } else {
            if (accumulator > 0) atomicAdd(&histo_s[prev], accumulator);
            accumulator = 1;
            prev = bin;
        }
    }
    if (accumulator > 0) atomicAdd(&histo_s[prev], accumulator);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) atomicAdd(&histo[b], histo_s[b]);
}

// Each element takes a ticket from a counter that wraps at `limit` (atomicInc's semantics)
// and counts the ticket it got.
extern "C" __global__ void ticket_wrap(unsigned int* counter, unsigned int* taken, unsigned int limit, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&taken[atomicInc(counter, limit)], 1u);
}

// A float histogram of values by bucket, with float atomics (order varies run to run).
extern "C" __global__ void weighted_histogram(const float* values, const float* weights, float* bins, int nbins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = min(max((int)(values[i] * nbins), 0), nbins - 1);
        atomicAdd(&bins[b], weights[i]);
    }
}
