//no-bug: block 0 publishes data to block 1 through a volatile flag after __threadfence(); block 1 waits for the flag before it reads
//--blockDim=32 --gridDim=2
__device__ int flag;
extern "C" __global__ void publish(float* data) {
    volatile int* f = &flag;
    if (blockIdx.x == 0) {
        data[threadIdx.x] = threadIdx.x + 0.5f;
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            *f = 1;
        }
    } else {
        if (threadIdx.x == 0) while (*f == 0) { }
        __syncthreads();
        data[blockDim.x + threadIdx.x] = 2.0f * data[threadIdx.x];
    }
}
