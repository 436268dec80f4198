// Prefix sums in the styles of PMPP ch. 11, GPU Gems 3 ch. 39 and warp-shuffle scans;
// stream compaction with votes.
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)

// Hillis-Steele, double buffered: an inclusive scan of each block's section.
extern "C" __global__ void scan_hillis_steele(const float* in, float* out, int n) {
    extern __shared__ float temp[];   // 2 * blockDim.x
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    int pout = 0, pin = 1;
    temp[pout * blockDim.x + tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset) temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid] + temp[pin * blockDim.x + tid - offset];
        else temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid];
        __syncthreads();
    }
    if (i < n) out[i] = temp[pout * blockDim.x + tid];
}

// Blelloch's work-efficient exclusive scan of 2 * blockDim.x elements per block, with the
// padding that avoids bank conflicts.
extern "C" __global__ void scan_blelloch(const int* in, int* out, int* sums, int n) {
    extern __shared__ int itemp[];   // one name, one type: all extern __shared__ arrays are one memory
    int* temp = itemp;
    int tid = threadIdx.x, m = 2 * blockDim.x, base = blockIdx.x * m;
    int ai = tid, bi = tid + blockDim.x;
    int bankOffsetA = CONFLICT_FREE_OFFSET(ai), bankOffsetB = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bankOffsetA] = (base + ai < n) ? in[base + ai] : 0;
    temp[bi + bankOffsetB] = (base + bi < n) ? in[base + bi] : 0;
    int offset = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (tid == 0) {
        int last = m - 1 + CONFLICT_FREE_OFFSET(m - 1);
        sums[blockIdx.x] = temp[last];
        temp[last] = 0;
    }
    for (int d = 1; d < m; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            int t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    if (base + ai < n) out[base + ai] = temp[ai + bankOffsetA];
    if (base + bi < n) out[base + bi] = temp[bi + bankOffsetB];
}

// Inclusive scan of each warp by __shfl_up_sync, then of the warp totals.
extern "C" __global__ void scan_warp_shuffle(const int* in, int* out, int n) {
    __shared__ int warp_totals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = (i < n) ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
    }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int t = (lane < (blockDim.x >> 5)) ? warp_totals[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            int u = __shfl_up_sync(0xffffffffu, t, d);
            if (lane >= d) t += u;
        }
        warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    if (i < n) out[i] = v;
}

// The second pass of a multi-block scan: each block adds the sum of the blocks before it.
extern "C" __global__ void scan_add_block_offsets(int* data, const int* block_sums, int n, int per_block) {
    __shared__ int offset;
    if (threadIdx.x == 0) {
        int s = 0;
        for (int b = 0; b < blockIdx.x; ++b) s += block_sums[b];
        offset = s;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < per_block; j += blockDim.x) {
        int i = blockIdx.x * per_block + j;
        if (i < n) data[i] += offset;
    }
}

// Segmented inclusive scan within each block: a flag starts a new segment.
extern "C" __global__ void scan_segmented(const float* in, const int* flags, float* out, int n) {
    __shared__ float val[256];
    __shared__ int flg[256];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    val[tid] = (i < n) ? in[i] : 0.0f;
    flg[tid] = (i < n) ? flags[i] : 1;
    if (tid == 0) flg[0] = 1;
    __syncthreads();
    for (int d = 1; d < blockDim.x; d *= 2) {
        float v = val[tid];
        int f = flg[tid];
        if (tid >= d && !f) { v += val[tid - d]; f |= flg[tid - d]; }
        __syncthreads();
        val[tid] = v;
        flg[tid] = f;
        __syncthreads();
    }
    if (i < n) out[i] = val[tid];
}

// Stream compaction of one warp's elements with a ballot and a population count.
extern "C" __global__ void compact_positive(const float* in, float* out, int* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    bool keep = i < n && in[i] > 0.0f;
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    int before = __popc(mask & ((1u << lane) - 1u));
    int warp = i / 32;
    if (keep) out[warp * 32 + before] = in[i];
    if (lane == 0) counts[warp] = __popc(mask);
}
