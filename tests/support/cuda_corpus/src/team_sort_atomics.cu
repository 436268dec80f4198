// Sorting networks and ranking in shared memory; atomics and device variables in the
// patterns real code uses them.
#include <cooperative_groups.h>
#include <math_constants.h>
namespace cg = cooperative_groups;

// Bitonic sort of one block's elements (blockDim.x a power of two), in shared memory.
extern "C" __global__ void bitonic_sort_block(float* data, int n) {
    extern __shared__ float s[];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? data[i] : CUDART_INF_F;
    __syncthreads();
    for (unsigned int k = 2; k <= blockDim.x; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = t ^ j;
            if (ixj > t) {
                bool up = (t & k) == 0;
                if ((s[t] > s[ixj]) == up) {
                    float tmp = s[t];
                    s[t] = s[ixj];
                    s[ixj] = tmp;
                }
            }
            __syncthreads();
        }
    }
    if (i < n) data[i] = s[t];
}

// Odd-even transposition sort of one block's elements.
extern "C" __global__ void odd_even_sort_block(int* data, int n) {
    __shared__ int s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? data[i] : 0x7fffffff;
    __syncthreads();
    for (int phase = 0; phase < blockDim.x; ++phase) {
        int a = 2 * t + (phase & 1);
        if (a + 1 < blockDim.x && s[a] > s[a + 1]) {
            int tmp = s[a];
            s[a] = s[a + 1];
            s[a + 1] = tmp;
        }
        __syncthreads();
    }
    if (i < n) data[i] = s[t];
}

// Rank sort: each element's place is the number of smaller ones (ties broken by index).
extern "C" __global__ void rank_sort(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    int rank = 0;
    for (int j = 0; j < n; ++j) rank += (in[j] < v) || (in[j] == v && j < i);
    out[rank] = v;
}

// One split step of a radix sort on bit `bit`, one block: zeros first, stable.
extern "C" __global__ void radix_split(const unsigned int* in, unsigned int* out, int bit, int n) {
    __shared__ unsigned int keys[256];
    __shared__ int ones_before[256];
    int t = threadIdx.x;
    unsigned int k = (t < n) ? in[t] : 0xffffffffu;
    keys[t] = k;
    int is_one = (t < n) && ((k >> bit) & 1u);
    ones_before[t] = is_one;
    __syncthreads();
    for (int d = 1; d < blockDim.x; d *= 2) {   // inclusive scan of the ones
        int v = (t >= d) ? ones_before[t - d] : 0;
        __syncthreads();
        ones_before[t] += v;
        __syncthreads();
    }
    int total_ones = ones_before[blockDim.x - 1];
    int zeros = __syncthreads_count(t < n) - total_ones;
    int ones_excl = ones_before[t] - is_one;
    if (t < n) out[is_one ? zeros + ones_excl : t - ones_excl] = k;
}

// atomicCAS loop: a float maximum, as the CUDA programming guide builds other atomics. The
// first read may decide to skip the CAS, so it is a volatile read: a plain one would race with
// the other threads' CAS.
__device__ float atomic_max_float(float* address, float val) {
    int* addr = (int*)address;
    int old = *(volatile int*)addr, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= val) break;
        old = atomicCAS(addr, assumed, __float_as_int(val));
    } while (assumed != old);
    return __int_as_float(old);
}

extern "C" __global__ void max_by_cas(const float* in, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(result, in[i]);
}

// A device counter of calls and a device array of per-key totals, read back by get_global.
__device__ unsigned long long launches_seen;
__device__ int key_totals[16];

extern "C" __global__ void count_keys(const int* keys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(&launches_seen, 1ull);
    if (i < n) atomicAdd(&key_totals[keys[i] & 15], keys[i]);
}

// A lookup table in constant memory (filled by get_global), indexed by bytes.
__constant__ unsigned char sbox[256];
extern "C" __global__ void substitute(const unsigned char* in, unsigned char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = sbox[in[i]];
}

// A shared counter: one thread zeroes it, every thread adds, one thread reports.
extern "C" __global__ void shared_counter(const float* in, int* counts, float threshold, int n) {
    __shared__ int count;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    if (i < n && in[i] > threshold) atomicAdd_block(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        count++;
        counts[blockIdx.x] = count - 1;
    }
}

// Warp-aggregated atomics: one atomic per warp for the elements that pass a test.
extern "C" __global__ void filter_warp_aggregated(const int* in, int* out, int* nout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    bool pass = i < n && in[i] % 3 == 0;
    unsigned active = __ballot_sync(0xffffffffu, pass);
    int leader = __ffs(active) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(nout, __popc(active));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    if (pass) out[base + __popc(active & ((1u << lane) - 1))] = in[i];
}

// Cooperative groups: a tile-of-8 reduction whose results are merged with atomics.
extern "C" __global__ void tile8_sums(const int* in, int* out, int n) {
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(b);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? in[i] : 0;
    for (int o = 4; o > 0; o /= 2) v += t8.shfl_down(v, o);
    if (t8.thread_rank() == 0) atomicAdd(&out[(i / 8) % 4], v);
}
