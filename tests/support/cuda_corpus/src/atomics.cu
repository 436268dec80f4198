// Atomics and device variables as the CUDA C Programming Guide and everyday code use
// them: atomicCAS loops building the operations CUDA lacks, atomicExch without spinning,
// __device__ counters the host reads back, a __constant__ lookup table the host fills,
// block-local counting in shared memory, _block-scoped atomics and bit-mask atomics.

// Float atomicMax from atomicCAS on the bits (the Programming Guide's pattern).
__device__ float atomicMaxFloat(float* address, float val) {
    int* address_as_int = (int*)address;
    int old = *address_as_int, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}

// Every thread folds its element into its block's slot, the block's slot into the
// grid's maximum after a barrier (global memory: the block's atomics are visible).
extern "C" __global__ void max_cas(const float* in, float* block_max, float* grid_max, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMaxFloat(&block_max[blockIdx.x], in[i]);
    __syncthreads();
    if (threadIdx.x == 0) atomicMaxFloat(grid_max, block_max[blockIdx.x]);
}

// Double atomicAdd from a 64-bit atomicCAS (the Guide's pre-sm_60 code), renamed so it
// does not clash with the built-in overload.
__device__ double atomicAddDouble(double* address, double val) {
    unsigned long long int* address_as_ull = (unsigned long long int*)address;
    unsigned long long int old = *address_as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}

extern "C" __global__ void sum_cas_double(const double* in, double* total, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAddDouble(total, in[i]);
}

// Swapping two arrays element by element with atomicExch: one exchange, one store,
// no waiting.
extern "C" __global__ void swap_exch(float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float mine = b[i];
        float old = atomicExch(&a[i], mine);
        b[i] = old;
    }
}

// First-touch claims: the thread whose atomicExch finds 0 is the first to see its key,
// and counts one distinct key in a __device__ variable.
__device__ unsigned int distinct_keys;

extern "C" __global__ void claim_exch(const int* keys, unsigned int* claimed, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && atomicExch(&claimed[keys[i]], 1u) == 0u) atomicAdd(&distinct_keys, 1u);
}

// Counters in device memory that the host reads back with get_global.
__device__ unsigned int n_positive;
__device__ int n_negative;
__device__ unsigned long long sum_of_squares;

extern "C" __global__ void count_signs(const int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = v[i];
    if (x > 0) atomicAdd(&n_positive, 1u);
    else if (x < 0) atomicSub(&n_negative, 1);
    atomicAdd(&sum_of_squares, (unsigned long long)(x * x));
}

// A gamma lookup table in constant memory, filled by the host, for 8-bit pixels.
__constant__ float c_lut[256];
__constant__ float c_gain;

extern "C" __global__ void apply_lut(const unsigned char* img, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = c_gain * c_lut[img[i]];
}

// Counting a block's elements above a threshold in a __shared__ int with atomicAdd.
extern "C" __global__ void count_shared_atomic(const float* in, int* counts, float threshold, int n) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > threshold) atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

// The same count by one thread with count++, after every thread has left its flag.
extern "C" __global__ void count_shared_guarded(const float* in, int* counts, float threshold, int n) {
    __shared__ int count;
    __shared__ unsigned char flag[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    flag[threadIdx.x] = i < n && in[i] > threshold;
    __syncthreads();
    if (threadIdx.x == 0) {
        count = 0;
        for (int k = 0; k < blockDim.x; ++k)
            if (flag[k]) count++;
        counts[blockIdx.x] = count;
    }
}

// Block-scoped atomics on each block's own slot in global memory: the sum, the set of
// residues mod 32 as a bit mask (atomicOr_block), and the count, in an int3-like triple.
extern "C" __global__ void block_scope_stats(const int* v, int* sums, unsigned int* masks, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd_block(&sums[2 * blockIdx.x], v[i]);
        atomicAdd_block(&sums[2 * blockIdx.x + 1], 1);
        unsigned int bit = 1u;
        bit <<= (v[i] & 31);
        atomicOr_block(&masks[blockIdx.x], bit);
    }
}

// Whole-array AND, OR and XOR of 32-bit words, each folded per thread first.
extern "C" __global__ void bit_reduce(const unsigned int* w, unsigned int* out, int n) {
    unsigned int a = 0xffffffffu, o = 0u, x = 0u;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        a &= w[i];
        o |= w[i];
        x ^= w[i];
    }
    atomicAnd(&out[0], a);
    atomicOr(&out[1], o);
    atomicXor(&out[2], x);
}

// A budget handed out by atomicSub, every request granted or refused from what the
// counter said (requests never exceed the budget here, so the final value is exact),
// and atomicDec counting a ring down.
extern "C" __global__ void spend_budget(const unsigned int* req, int* budget, unsigned int* ring, unsigned int ring_max,
                                        int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicSub(budget, (int)req[i]);
        atomicDec(ring, ring_max);
    }
}
