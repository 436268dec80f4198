// Scans as GPU Gems 3 ch. 39 (Harris, Sengupta, Owens), PMPP ch. 11 and the warp-shuffle
// idioms write them: Hillis-Steele double-buffered, Blelloch's work-efficient scan with
// the bank-conflict-avoiding offset macro, warp scans by __shfl_up_sync, the block-sums
// second pass, segmented scans and stream compaction by ballots.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)

typedef unsigned int u32;

// Hillis-Steele over one block's elements, ping-ponging between the two halves of the
// dynamic buffer (GPU Gems 3, Example 39-1); Exclusive shifts the input right by one.
template <bool Exclusive>
__global__ void scan_hillis_steele(const float* g_idata, float* g_odata, int n) {
    extern __shared__ float hs_temp[];   // not `temp`: an extern __shared__ name has one type in a file
    int thid = threadIdx.x;
    int len = blockDim.x;
    int gi = blockIdx.x * blockDim.x + thid;
    int pout = 0, pin = 1;
    if (Exclusive)
        hs_temp[pout * len + thid] = (thid > 0 && gi - 1 < n) ? g_idata[gi - 1] : 0.0f;
    else
        hs_temp[pout * len + thid] = gi < n ? g_idata[gi] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < len; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            hs_temp[pout * len + thid] = hs_temp[pin * len + thid] + hs_temp[pin * len + thid - offset];
        else
            hs_temp[pout * len + thid] = hs_temp[pin * len + thid];
        __syncthreads();
    }
    if (gi < n) g_odata[gi] = hs_temp[pout * len + thid];
}

// Blelloch: up-sweep, clear, down-sweep over 2*blockDim ints, padded against bank
// conflicts; each block also leaves its total in sums[] for the next pass.
extern "C" __global__ void prescan_blelloch(const int* g_idata, int* g_odata, int* sums, int n) {
    extern __shared__ int temp[];
    int thid = threadIdx.x;
    int m = 2 * blockDim.x;
    int base = blockIdx.x * m;
    int ai = thid;
    int bi = thid + m / 2;
    int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
    int bankOffsetB = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bankOffsetA] = base + ai < n ? g_idata[base + ai] : 0;
    temp[bi + bankOffsetB] = base + bi < n ? g_idata[base + bi] : 0;
    int offset = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0) {
        int last = m - 1 + CONFLICT_FREE_OFFSET(m - 1);
        sums[blockIdx.x] = temp[last];
        temp[last] = 0;
    }
    for (int d = 1; d < m; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            int t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    if (base + ai < n) g_odata[base + ai] = temp[ai + bankOffsetA];
    if (base + bi < n) g_odata[base + bi] = temp[bi + bankOffsetB];
}

// Inclusive warp scan by __shfl_up_sync, the warps' totals scanned by warp 0, added back;
// the block total goes to block_sums.
__device__ __forceinline__ float warp_inclusive(float x, int lane) {
    for (int d = 1; d < 32; d <<= 1) {
        float y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    return x;
}

extern "C" __global__ void scan_warp_shfl(const float* in, float* out, float* block_sums, int n) {
    __shared__ float warp_totals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    float x = i < n ? in[i] : 0.0f;
    x = warp_inclusive(x, lane);
    if (lane == 31) warp_totals[warp] = x;
    __syncthreads();
    if (warp == 0) {
        float t = lane < blockDim.x / 32 ? warp_totals[lane] : 0.0f;
        t = warp_inclusive(t, lane);
        __syncwarp();
        if (lane < blockDim.x / 32) warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) x += warp_totals[warp - 1];
    if (i < n) out[i] = x;
    if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = x;
}

// Second pass of a scan of large arrays: add each block's offset (the exclusive scan of
// the block sums) to its elements, the offset read once into shared memory.
extern "C" __global__ void add_block_offsets(float* data, const float* offsets, int n) {
    __shared__ float off;
    if (threadIdx.x == 0) off = offsets[blockIdx.x];
    __syncthreads();
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += off;
}

// One block scans an array of any length in chunks of blockDim, carrying the running
// total from chunk to chunk (the middle pass: scanning the block sums).
extern "C" __global__ void scan_one_block_carry(const int* in, int* out, int n) {
    extern __shared__ int buf[];
    __shared__ int carry;
    if (threadIdx.x == 0) carry = 0;
    for (int start = 0; start < n; start += blockDim.x) {
        int i = start + threadIdx.x;
        buf[threadIdx.x] = i < n ? in[i] : 0;
        __syncthreads();
        for (int d = 1; d < blockDim.x; d <<= 1) {
            int v = threadIdx.x >= d ? buf[threadIdx.x - d] : 0;
            __syncthreads();
            buf[threadIdx.x] += v;
            __syncthreads();
        }
        if (i < n) out[i] = carry + buf[threadIdx.x] - in[i];
        __syncthreads();
        if (threadIdx.x == blockDim.x - 1) carry += buf[threadIdx.x];
        __syncthreads();
    }
}

// Segmented inclusive scan: a head flag starts a new segment. Hillis-Steele over
// (value, flag) pairs; a block's first element always starts one.
extern "C" __global__ void segmented_scan(const float* in, const int* flags, float* out, int n) {
    __shared__ float s_val[256];
    __shared__ int s_flag[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s_val[t] = i < n ? in[i] : 0.0f;
    s_flag[t] = i < n ? flags[i] : 1;
    if (t == 0) s_flag[t] |= 1;
    __syncthreads();
    for (int d = 1; d < blockDim.x; d <<= 1) {
        float v = s_val[t];
        int f = s_flag[t];
        if (t >= d) {
            if (!f) v += s_val[t - d];
            f |= s_flag[t - d];
        }
        __syncthreads();
        s_val[t] = v;
        s_flag[t] = f;
        __syncthreads();
    }
    if (i < n) out[i] = s_val[t];
}

// Stream compaction of the positive elements: each warp's ballot and a popcount of the
// lanes below give positions; the warps' counts are scanned by one thread; each block
// writes its survivors to its own segment and their number to counts[].
extern "C" __global__ void compact_ballot(const float* in, float* out, int* counts, int n) {
    __shared__ unsigned int warp_count[32];
    __shared__ unsigned int warp_base[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = i < n ? in[i] : 0.0f;
    bool keep = i < n && v > 0.0f;
    unsigned int ballot = __ballot_sync(0xffffffffu, keep);
    unsigned int rank = __popc(ballot & ((1u << lane) - 1u));
    if (lane == 0) warp_count[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int total = 0;
        for (int w = 0; w < (blockDim.x + 31) / 32; ++w) {
            warp_base[w] = total;
            total += warp_count[w];
        }
        counts[blockIdx.x] = total;
    }
    __syncthreads();
    if (keep) out[blockIdx.x * blockDim.x + warp_base[warp] + rank] = v;
}

// Exclusive scan from a cooperative-groups tile scan: inclusive by shfl_up, then the
// exclusive value as the inclusive one minus the element; tile totals kept in shared.
extern "C" __global__ void scan_cg_exclusive(const u32* in, u32* out, u32* totals, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ u32 tile_sum[8];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    u32 x = i < n ? in[i] : 0u;
    u32 inc = x;
    for (unsigned int d = 1; d < tile.size(); d <<= 1) {
        u32 y = tile.shfl_up(inc, d);
        if (tile.thread_rank() >= d) inc += y;
    }
    if (tile.thread_rank() == tile.size() - 1) tile_sum[tile.meta_group_rank()] = inc;
    block.sync();
    u32 before = 0;
    for (unsigned int w = 0; w < tile.meta_group_rank(); ++w) before += tile_sum[w];
    if (i < n) out[i] = before + inc - x;
    if (block.thread_rank() == 0) {
        u32 all = 0;
        for (unsigned int w = 0; w < tile.meta_group_size(); ++w) all += tile_sum[w];
        totals[blockIdx.x] = all;
    }
}
