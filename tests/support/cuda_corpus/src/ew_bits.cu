// Integer intrinsics on unsigned words: population count, leading zeros, first set bit,
// bit reversal.
extern "C" __global__ void bit_stats(const unsigned int* x, int* popc, int* clz, int* ffs, unsigned int* rev, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = x[i];
        popc[i] = __popc(v);
        clz[i] = __clz(v);
        ffs[i] = __ffs(v);
        rev[i] = __brev(v);
    }
}
