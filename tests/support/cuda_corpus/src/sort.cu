// Sorting networks and ranking inside a block: bitonic sort (one element per thread, and
// the CUDA samples' key-value form with two per thread), odd-even transposition sort,
// rank (enumeration) sort by counting, and one split step of a radix sort.

#define BIG 3.0e38f

// Bitonic sort of one block's segment in shared memory, one element per thread
// (blockDim a power of two); the segment's missing elements are +BIG and sort last.
extern "C" __global__ void bitonic_shared(const float* in, float* out, int n) {
    extern __shared__ float s[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : BIG;
    __syncthreads();
    for (unsigned int k = 2; k <= blockDim.x; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = tid ^ j;
            if (ixj > tid) {
                auto a = s[tid];
                auto b = s[ixj];
                bool up = (tid & k) == 0;
                if ((a > b) == up) {
                    s[tid] = b;
                    s[ixj] = a;
                }
            }
            __syncthreads();
        }
    }
    if (i < n) out[i] = s[tid];
}

// CUDA samples sortingNetworks, bitonicSortShared: key-value pairs, SHARED_SIZE_LIMIT
// elements per block, two per thread, a Comparator taking references.
#define SHARED_SIZE_LIMIT 256

__device__ inline void Comparator(unsigned int& keyA, unsigned int& valA, unsigned int& keyB, unsigned int& valB,
                                  unsigned int dir) {
    unsigned int t;
    if ((keyA > keyB) == dir) {
        t = keyA; keyA = keyB; keyB = t;
        t = valA; valA = valB; valB = t;
    }
}

extern "C" __global__ void bitonicSortShared(unsigned int* d_DstKey, unsigned int* d_DstVal, unsigned int* d_SrcKey,
                                             unsigned int* d_SrcVal, unsigned int arrayLength, unsigned int dir) {
    __shared__ unsigned int s_key[SHARED_SIZE_LIMIT];
    __shared__ unsigned int s_val[SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];
    for (unsigned int size = 2; size < arrayLength; size <<= 1) {
        unsigned int ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned int pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], ddd);
        }
    }
    for (unsigned int stride = arrayLength / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        unsigned int pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], dir);
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
}

// Odd-even transposition sort of a block's 2*blockDim segment: each thread owns a pair,
// even phases compare (2t, 2t+1), odd phases (2t+1, 2t+2).
#ifndef OET_BLOCK
#define OET_BLOCK 64
#endif
extern "C" __global__ void odd_even_sort(const int* in, int* out, int n) {
    __shared__ int s[2 * OET_BLOCK];
    int t = threadIdx.x;
    int base = blockIdx.x * 2 * OET_BLOCK;
    for (int k = t; k < 2 * OET_BLOCK; k += blockDim.x)
        s[k] = base + k < n ? in[base + k] : 0x7fffffff;
    __syncthreads();
    for (int phase = 0; phase < 2 * OET_BLOCK; ++phase) {
        int i = 2 * t + (phase & 1);
        if (i + 1 < 2 * OET_BLOCK) {
            int& lo = s[i];
            int& hi = s[i + 1];
            if (lo > hi) { int tmp = lo; lo = hi; hi = tmp; }
        }
        __syncthreads();
    }
    for (int k = t; k < 2 * OET_BLOCK; k += blockDim.x)
        if (base + k < n) out[base + k] = s[k];
}

// Rank sort: each thread counts the elements that come before its own (smaller, or
// equal with a lower index: stable) over tiles of the whole array staged in shared
// memory, and writes its element at that rank.
#define RANK_TILE 128
extern "C" __global__ void rank_sort(const int* x, int* out, int n) {
    __shared__ int tile[RANK_TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int mine = i < n ? x[i] : 0;
    int rank = 0;
    for (int start = 0; start < n; start += RANK_TILE) {
        if (start + threadIdx.x < n) tile[threadIdx.x] = x[start + threadIdx.x];
        __syncthreads();
        int len = min(RANK_TILE, n - start);
        for (int j = 0; j < len; ++j) {
            int other = tile[j];
            rank += other < mine || (other == mine && start + j < i);
        }
        __syncthreads();
    }
    if (i < n) out[rank] = mine;
}

// One split step of an LSD radix sort over a block's segment (stable): the keys whose
// bit is 0 first. __syncthreads_count gives the number of zeros; a Hillis-Steele scan
// of the one-flags gives each key its place among the ones.
extern "C" __global__ void radix_split_count(const unsigned int* keys, unsigned int* out, int n, int bit) {
    __shared__ unsigned int ones_before[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int base = blockIdx.x * blockDim.x;
    int len = min((int)blockDim.x, n - base);
    unsigned int key = t < len ? keys[i] : 0u;
    unsigned int b = t < len ? (key >> bit) & 1u : 1u;
    int zeros = __syncthreads_count(t < len && b == 0);
    ones_before[t] = b;
    __syncthreads();
    for (int d = 1; d < blockDim.x; d <<= 1) {
        unsigned int add = t >= d ? ones_before[t - d] : 0u;
        __syncthreads();
        ones_before[t] += add;
        __syncthreads();
    }
    unsigned int ones_incl = ones_before[t];
    unsigned int ones_excl = ones_incl - b;
    unsigned int dst = b ? zeros + ones_excl : t - ones_excl;
    if (t < len) out[base + dst] = key;
}

// The same split with warp ballots: each warp counts its zeros, thread 0 lays out the
// warps' zero and one counts, each key finds its place from popcounts of the ballot.
extern "C" __global__ void radix_split_ballot(const unsigned int* keys, unsigned int* out, int n, int bit) {
    __shared__ int zero_count[8], zero_base[8], one_base[8];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    int base = blockIdx.x * blockDim.x;
    int len = min((int)blockDim.x, n - base);
    bool valid = t < len;
    unsigned int key = valid ? keys[base + t] : 0u;
    bool is_one = ((key >> bit) & 1u) != 0;
    unsigned int zeros = __ballot_sync(0xffffffffu, valid && !is_one);
    unsigned int ones = __ballot_sync(0xffffffffu, valid && is_one);
    unsigned int below = (1u << lane) - 1u;
    if (lane == 0) zero_count[w] = __popc(zeros);
    __syncthreads();
    if (t == 0) {
        int nw = blockDim.x / 32, z = 0, total_zeros = 0;
        for (int k = 0; k < nw; ++k) total_zeros += zero_count[k];
        int o = total_zeros;
        for (int k = 0; k < nw; ++k) {
            int valid_in_warp = max(0, min(32, len - 32 * k));
            zero_base[k] = z;
            one_base[k] = o;
            z += zero_count[k];
            o += valid_in_warp - zero_count[k];
        }
    }
    __syncthreads();
    if (valid) {
        int dst = is_one ? one_base[w] + __popc(ones & below) : zero_base[w] + __popc(zeros & below);
        out[base + dst] = key;
    }
}
