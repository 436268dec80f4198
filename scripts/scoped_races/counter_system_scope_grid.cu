//no-bug: every block adds into one counter with atomicAdd_system: system scope covers the whole grid
//--blockDim=64 --gridDim=4
extern "C" __global__ void count_all(const int* in, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] >= 0) atomicAdd_system(count, 1);
}
