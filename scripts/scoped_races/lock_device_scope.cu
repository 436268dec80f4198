//no-bug: thread 0 of each block takes a spin lock with atomicCAS, __threadfence() and atomicExch: the guarded += of different blocks are ordered
//--blockDim=32 --gridDim=4
__device__ int mutex;
__device__ float total;
extern "C" __global__ void locked_sum(const float* in) {
    if (threadIdx.x == 0) {
        while (atomicCAS(&mutex, 0, 1) != 0) { }
        __threadfence();
        total += in[blockIdx.x];
        __threadfence();
        atomicExch(&mutex, 0);
    }
}
