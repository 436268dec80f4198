// Reductions in the styles of NVIDIA's reduction sample (kernels 1-7), PMPP ch. 10 and
// the warp-shuffle and cooperative-groups versions. Each block writes its partial sum.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <math_constants.h>
namespace cg = cooperative_groups;

extern "C" __global__ void reduce_interleaved(const float* in, float* out, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_strided_index(const float* in, float* out, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_sequential(const float* in, float* out, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Two elements per thread, added while loading.
extern "C" __global__ void reduce_first_add(const float* in, float* out, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float sum = (i < n) ? in[i] : 0.0f;
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

// The unrolled last warp, on a volatile pointer, with the __syncwarp() Volta requires.
__device__ void warp_reduce(volatile float* s, unsigned int tid) {
    float v = s[tid];
    for (int offset = 32; offset > 0; offset >>= 1) {
        v += s[tid + offset];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
    }
}

extern "C" __global__ void reduce_unrolled_warp(const float* in, float* out, int n) {
    __shared__ float sdata[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <unsigned int blockSize>
__global__ void reduce_complete_unroll(const float* in, float* out, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    float sum = 0.0f;
    while (i < n) {
        sum += in[i];
        if (i + blockSize < n) sum += in[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = sum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (blockSize >= 64) sum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

// Warp sums by shuffles, then the first warp reduces them.
extern "C" __global__ void reduce_shuffle(const float* in, float* out, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    float v = (i < n) ? in[i] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < blockDim.x / warpSize) ? warp_sums[lane] : 0.0f;
        for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

extern "C" __global__ void reduce_cooperative(const float* in, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ float tile_sums[32];
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    float v = (i < n) ? in[i] : 0.0f;
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
    block.sync();
    if (block.thread_rank() == 0) {
        float total = 0.0f;
        for (unsigned int t = 0; t < tile.meta_group_size(); ++t) total += tile_sums[t];
        out[blockIdx.x] = total;
    }
}

// A grid-stride loop, then one integer atomic per block: the same total every run.
extern "C" __global__ void reduce_grid_stride_atomic(const int* in, unsigned long long* total, int n) {
    __shared__ long long partial[256];
    long long sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)partial[0]);
}

extern "C" __global__ void dot_product(const float* a, const float* b, float* out, int n) {
    __shared__ float cache[256];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    float temp = 0;
    while (tid < n) {
        temp += a[tid] * b[tid];
        tid += blockDim.x * gridDim.x;
    }
    cache[threadIdx.x] = temp;
    __syncthreads();
    int i = blockDim.x / 2;
    while (i != 0) {
        if (threadIdx.x < i) cache[threadIdx.x] += cache[threadIdx.x + i];
        __syncthreads();
        i /= 2;
    }
    if (threadIdx.x == 0) out[blockIdx.x] = cache[0];
}

// Max and its index per block, by shuffles carrying both.
extern "C" __global__ void argmax_shuffle(const float* in, float* best, int* where, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : -CUDART_INF_F;
    int k = (i < n) ? i : -1;
    for (int offset = 16; offset > 0; offset /= 2) {
        float ov = __shfl_down_sync(0xffffffff, v, offset);
        int ok = __shfl_down_sync(0xffffffff, k, offset);
        if (ov > v || (ov == v && ok >= 0 && (k < 0 || ok < k))) { v = ov; k = ok; }
    }
    if (threadIdx.x == 0) { best[blockIdx.x] = v; where[blockIdx.x] = k; }
}

// Counts with block-wide votes: how many positive, and whether all or any are.
extern "C" __global__ void vote_counts(const float* in, int* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int positive = i < n && in[i] > 0.0f;
    int c = __syncthreads_count(positive);
    int all = __syncthreads_and(positive || i >= n);
    int any = __syncthreads_or(positive);
    if (threadIdx.x == 0) { counts[3 * blockIdx.x] = c; counts[3 * blockIdx.x + 1] = all; counts[3 * blockIdx.x + 2] = any; }
}

// The threadFenceReduction sample's pattern: the last block to finish sums the partials.
__device__ unsigned int retirement_count = 0;

extern "C" __global__ void reduce_last_block(const float* in, float* partial, float* total, int n) {
    __shared__ float sdata[128];
    __shared__ bool am_last;
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
        __threadfence();
        unsigned int ticket = atomicInc(&retirement_count, gridDim.x);
        am_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (am_last && tid == 0) {
        float t = 0.0f;
        for (unsigned int b = 0; b < gridDim.x; ++b) t += partial[b];
        total[0] = t;
        retirement_count = 0;
    }
}
