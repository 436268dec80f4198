//no-bug: within one block, warp 1 publishes to warp 0 through a volatile flag after __threadfence_block(), whose block scope covers both
//--blockDim=64 --gridDim=1
__device__ int flag;
extern "C" __global__ void publish(int* out) {
    volatile int* f = &flag;
    if (threadIdx.x == 40) {
        out[1] = 41;
        __threadfence_block();
        *f = 1;
    }
    if (threadIdx.x == 0) {
        while (*f != 1) { }
        out[0] = out[1] + 1;
    }
}
