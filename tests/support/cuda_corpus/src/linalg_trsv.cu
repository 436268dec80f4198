// Batched lower-triangular solves L x = b, one block per system (n <= 64): forward
// substitution by columns, the right-hand side in shared memory, two barriers a step.
extern "C" __global__ void trsv_lower_batched(const float* L, const float* b, float* x, int n) {
    __shared__ float rhs[64];
    const float* Ls = L + (size_t)blockIdx.x * n * n;
    int t = threadIdx.x;
    if (t < n) rhs[t] = b[blockIdx.x * n + t];
    __syncthreads();
    for (int i = 0; i < n; ++i) {
        if (t == i) rhs[i] = rhs[i] / Ls[i * n + i];
        __syncthreads();
        if (t > i && t < n) rhs[t] -= Ls[t * n + i] * rhs[i];
        __syncthreads();
    }
    if (t < n) x[blockIdx.x * n + t] = rhs[t];
}
