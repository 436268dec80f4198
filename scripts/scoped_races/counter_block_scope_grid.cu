//race-global: every block adds into one counter with atomicAdd_block, whose block scope makes it no atomic for the other blocks
//--blockDim=64 --gridDim=4
extern "C" __global__ void count_all(const int* in, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] >= 0) atomicAdd_block(count, 1);
}
