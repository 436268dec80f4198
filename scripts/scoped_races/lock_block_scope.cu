//race-global: thread 0 of each block takes a spin lock with atomicCAS_block and atomicExch_block: of block scope, the lock orders nothing between blocks, so the guarded += races
//--blockDim=32 --gridDim=4
__device__ int mutex;
__device__ float total;
extern "C" __global__ void locked_sum(const float* in) {
    if (threadIdx.x == 0) {
        while (atomicCAS_block(&mutex, 0, 1) != 0) { }
        __threadfence();
        total += in[blockIdx.x];
        __threadfence();
        atomicExch_block(&mutex, 0);
    }
}
