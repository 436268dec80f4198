//no-bug: each block adds into its own counter with atomicAdd_block: block scope covers every thread that touches it
//--blockDim=64 --gridDim=4
extern "C" __global__ void count_per_block(const int* in, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] >= 0) atomicAdd_block(&count[blockIdx.x], 1);
}
