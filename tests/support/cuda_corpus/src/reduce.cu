// Reductions in the spellings of the code people learn them from: Mark Harris's
// "Optimizing Parallel Reduction in CUDA" (kernels 1-6 of the CUDA samples' reduction),
// Justin Luitjens's "Faster Parallel Reductions on Kepler", the threadFenceReduction
// sample, CUDA by Example's dot product, cooperative groups, and students' variations.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

typedef float real;
typedef unsigned int uint;

#ifndef BLOCK
#define BLOCK 128
#endif

#define FULL_MASK 0xffffffffu

// Kernel 1: interleaved addressing, a divergent branch on tid % (2*s).
extern "C" __global__ void reduce0_interleaved(const real* g_idata, real* g_odata, int n) {
    __shared__ real sdata[BLOCK];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (uint s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 2: interleaved addressing with a strided index, no divergent modulo.
extern "C" __global__ void reduce1_strided(const float* g_idata, float* g_odata, unsigned int n) {
    extern __shared__ float s1[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    s1[tid] = 0.0f;
    if (i < n) s1[tid] = g_idata[i];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s <<= 1) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            s1[index] += s1[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = s1[0];
}

// Kernel 3: sequential addressing over a dynamic char buffer viewed as floats.
extern "C" __global__ void reduce2_sequential(const float* g_idata, float* g_odata, int n) {
    extern __shared__ char smem[];
    float* sdata = (float*)smem;
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? g_idata[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 4: first add during the global load (each block covers 2*blockDim elements),
// the tree step through a reference to the thread's own slot.
extern "C" __global__ void reduce3_first_add(const float* g_idata, float* g_odata, int n) {
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float mySum = 0.0f;
    if (i < n) mySum = g_idata[i];
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        float& mine = sdata[tid];
        if (tid < s) mine += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 5: the last warp unrolled through a volatile pointer, with the __syncwarp()s
// that Volta's independent thread scheduling requires between a step's read and write.
__device__ void warpReduce(volatile float* sdata, unsigned int tid) {
    float v = sdata[tid];
    v += sdata[tid + 32]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 8];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 4];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 2];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 1];  __syncwarp(); sdata[tid] = v;
}

extern "C" __global__ void reduce4_unroll_warp(const float* g_idata, float* g_odata, int n) {
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float sum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) sum += g_idata[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warpReduce(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 6: complete unrolling on a template block size, several elements per thread,
// and the volatile warp tail as a template too.
template <unsigned int blockSize>
__device__ void warpReduceT(volatile float* sdata, unsigned int tid) {
    float v = sdata[tid];
    if (blockSize >= 64) { v += sdata[tid + 32]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 32) { v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 16) { v += sdata[tid + 8]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 8) { v += sdata[tid + 4]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 4) { v += sdata[tid + 2]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 2) { v += sdata[tid + 1]; __syncwarp(); sdata[tid] = v; }
}

template <unsigned int blockSize>
__global__ void reduce5_complete(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    float sum = 0;
    while (i < n) {
        sum += g_idata[i];
        if (i + blockSize < n) sum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] = sum = sum + sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] = sum = sum + sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] = sum = sum + sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduceT<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Cooperative groups: tiles of 32, shfl_down within each, the tiles' sums in shared.
extern "C" __global__ void reduce_cg_tiles(const float* in, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);
    __shared__ float tile_sums[32];
    unsigned int i = blockIdx.x * block.size() + block.thread_rank();
    float v = 0.0f;
    if (i < n) v = in[i];
    for (int k = tile32.size() / 2; k > 0; k /= 2)
        v += tile32.shfl_down(v, k);
    if (tile32.thread_rank() == 0) tile_sums[tile32.meta_group_rank()] = v;
    block.sync();
    if (tile32.meta_group_rank() == 0) {
        v = tile32.thread_rank() < tile32.meta_group_size() ? tile_sums[tile32.thread_rank()] : 0.0f;
        for (int k = 16; k > 0; k >>= 1) v += tile32.shfl_down(v, k);
        if (block.thread_rank() == 0) out[blockIdx.x] = v;
    }
}

// A grid-stride loop accumulating in double, a shared tree in double.
extern "C" __global__ void reduce_grid_stride_double(const float* x, double* partial, int n) {
    __shared__ double acc[BLOCK];
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += (double)x[i];
    acc[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) acc[threadIdx.x] += acc[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = acc[0];
}

// Two-pass reduction: pass 1 writes one partial per block; pass 2, one block, reduces the
// partials (it loops when there are more partials than threads).
extern "C" __global__ void reduce_pass1(const float* in, float* partial, int n) {
    __shared__ float s[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? in[i] : 0.f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_pass2(const float* partial, float* result, int num_partials) {
    __shared__ float s[BLOCK];
    int t = threadIdx.x;
    float sum = 0.f;
    for (int j = t; j < num_partials; j += blockDim.x) sum += partial[j];
    s[t] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) *result = s[0];
}

// Block sums added atomically to one total: exact for integers, order-dependent for floats.
extern "C" __global__ void reduce_atomic_int(const int* in, int* total, int n) {
    __shared__ int sdata[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, sdata[0]);
}

extern "C" __global__ void reduce_atomic_float(const float* in, float* total, int n) {
    __shared__ float sdata[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, sdata[0]);
}

// threadFenceReduction: each block writes its partial, fences, takes a ticket; the block
// that takes the last ticket adds the partials and resets the counter for the next launch.
__device__ unsigned int blocks_done = 0;

extern "C" __global__ void reduce_last_block(const float* in, volatile float* partial, float* total, int n) {
    __shared__ float sdata[BLOCK];
    __shared__ bool amLast;
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
        __threadfence();
        unsigned int ticket = atomicAdd(&blocks_done, 1u);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast) {
        float sum = 0.0f;
        for (unsigned int k = tid; k < gridDim.x; k += blockDim.x) sum += partial[k];
        sdata[tid] = sum;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
        if (tid == 0) {
            *total = sdata[0];
            blocks_done = 0;
        }
    }
}

// Dot product: float4 loads through a C-style cast with a scalar tail, a butterfly of
// __shfl_xor_sync, one partial per block.
extern "C" __global__ void dot_float4(const float* x, const float* y, float* partial, int n) {
    __shared__ float warp_dot[BLOCK / 32];
    const float *a = x, *b = y;
    int n4 = n / 4;
    float acc = 0.0f;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n4; k += blockDim.x * gridDim.x) {
        float4 p = ((const float4*)a)[k];
        float4 q = ((const float4*)b)[k];
        acc += p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
    }
    int tail = 4 * n4 + blockIdx.x * blockDim.x + threadIdx.x;
    if (tail < n) acc += a[tail] * b[tail];
    for (int mask = 16; mask >= 1; mask /= 2) acc += __shfl_xor_sync(FULL_MASK, acc, mask);
    if (threadIdx.x % 32 == 0) warp_dot[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) s += warp_dot[w];
        partial[blockIdx.x] = s;
    }
}

// Minimum and maximum of integers: per thread, then into shared with atomics, then one
// global atomic per block.
extern "C" __global__ void minmax_atomic(const int* in, int* out, int n) {
    __shared__ int smin, smax;
    if (threadIdx.x == 0) { smin = 0x7fffffff; smax = -0x7fffffff - 1; }
    __syncthreads();
    int lo = 0x7fffffff, hi = -0x7fffffff - 1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int v = in[i];
        lo = min(lo, v);
        hi = max(hi, v);
    }
    atomicMin(&smin, lo);
    atomicMax(&smax, hi);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMin(&out[0], smin);
        atomicMax(&out[1], smax);
    }
}

// Argmax per block with shuffles carrying value and index; ties go to the lower index.
extern "C" __global__ void argmax_shfl(const float* in, float* best, int* where, int n) {
    __shared__ float wval[32];
    __shared__ int widx[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = i < n ? in[i] : -3.0e38f;
    int k = i < n ? i : 0x7fffffff;
    for (int off = 16; off > 0; off >>= 1) {
        float ov = __shfl_down_sync(FULL_MASK, v, off);
        int ok = __shfl_down_sync(FULL_MASK, k, off);
        if (ov > v || (ov == v && ok < k)) { v = ov; k = ok; }
    }
    if (lane == 0) { wval[warp] = v; widx[warp] = k; }
    __syncthreads();
    if (warp == 0) {
        int nw = (blockDim.x + 31) / 32;
        v = lane < nw ? wval[lane] : -3.0e38f;
        k = lane < nw ? widx[lane] : 0x7fffffff;
        for (int off = 16; off > 0; off >>= 1) {
            float ov = __shfl_down_sync(FULL_MASK, v, off);
            int ok = __shfl_down_sync(FULL_MASK, k, off);
            if (ov > v || (ov == v && ok < k)) { v = ov; k = ok; }
        }
        if (lane == 0) { best[blockIdx.x] = v; where[blockIdx.x] = k; }
    }
}

// Argmax of the whole array in one 64-bit atomicMax: the float made order-preserving
// as unsigned in the high word, the complemented index (lower wins ties) in the low word.
extern "C" __global__ void argmax_packed_atomic(const float* in, unsigned int* packed_pair, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int u = __float_as_uint(in[i]);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    unsigned long long key = ((unsigned long long)u << 32) | (unsigned int)(~i);
    atomicMax((unsigned long long*)packed_pair, key);
}

// Label propagation along linked runs inside a block until nothing changes, with
// __syncthreads_or as the loop's test, __syncthreads_count counting the runs and
// __syncthreads_and checking every run ended up uniform.
extern "C" __global__ void run_max_propagate(const int* vals, const unsigned char* link, int* out,
                                             int* stats, int n) {
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    bool valid = i < n;
    bool linked = valid && t + 1 < blockDim.x && i + 1 < n && link[i];
    s[t] = valid ? vals[i] : -1;
    __syncthreads();
    int changed;
    do {
        int mine = s[t];
        int best = mine;
        if (linked) best = max(best, s[t + 1]);
        if (t > 0 && valid && link[i - 1]) best = max(best, s[t - 1]);
        __syncthreads();
        s[t] = best;
        changed = __syncthreads_or(best != mine);
    } while (changed);
    int heads = __syncthreads_count(valid && (t == 0 || !link[i - 1]));
    int uniform = __syncthreads_and(!linked || s[t] == s[t + 1]);
    if (valid) out[i] = s[t];
    if (t == 0) { stats[2 * blockIdx.x] = heads; stats[2 * blockIdx.x + 1] = uniform; }
}
