// Justin Luitjens, "Faster Parallel Reductions on Kepler" (NVIDIA developer blog), as
// people copy it: a function-scope `static __shared__` array of warp sums.
#define FULL_MASK 0xffffffffu

// A grid-stride loop, then shuffles within each
// warp and once more over the warps' sums.
__inline__ __device__ float warpReduceSum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(FULL_MASK, val, offset);
    return val;
}

__inline__ __device__ float blockReduceSum(float val) {
    static __shared__ float shared[32];
    int lane = threadIdx.x % warpSize;
    int wid = threadIdx.x / warpSize;
    val = warpReduceSum(val);
    if (lane == 0) shared[wid] = val;
    __syncthreads();
    val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;
    if (wid == 0) val = warpReduceSum(val);
    return val;
}

extern "C" __global__ void deviceReduceKernel(float* in, float* out, int N) {
    float sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
        sum += in[i];
    sum = blockReduceSum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// The same with the warp's total added to one integer by lane 0 of each warp.
extern "C" __global__ void deviceReduceWarpAtomicKernel(const int* in, int* out, int N) {
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
        sum += in[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        sum += __shfl_down_sync(FULL_MASK, sum, offset);
    if ((threadIdx.x & (warpSize - 1)) == 0) atomicAdd(out, sum);
}

