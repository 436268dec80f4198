//no-bug: NVIDIA's threadFenceReduction: each block's partial sum, __threadfence(), then atomicInc; the last block reads them all
//--blockDim=32 --gridDim=4
__device__ unsigned count;
extern "C" __global__ void sum(const float* in, float* partial, float* out) {
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        last = atomicInc(&count, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float s = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) s += partial[b];
        out[0] = s;
    }
}
