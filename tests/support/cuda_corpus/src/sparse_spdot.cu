// Dot product of a sparse vector (indices, values) with a dense one: grid-stride partial
// sums, a butterfly of __shfl_xor_sync in each warp, warp totals in shared memory, the
// first warp combines them and adds the block's total to the result.
extern "C" __global__ void sparse_dense_dot(const int* idx, const float* val, int nnz, const float* dense, float* result) {
    __shared__ float warp_sums[32];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nnz; i += gridDim.x * blockDim.x) s += val[i] * dense[idx[i]];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    if (lane == 0) warp_sums[wid] = s;
    __syncthreads();
    if (wid == 0) {
        s = (lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) atomicAdd(result, s);
    }
}
