// Euclidean norm of every column, one block per column: strided partial sums of squares,
// then a tree in shared memory.
#define NT 128

extern "C" __global__ void col_norms_block(const float* A, float* norms, int m, int n) {
    __shared__ float partial[NT];
    int j = blockIdx.x, t = threadIdx.x;
    float s = 0.0f;
    for (int i = t; i < m; i += NT) {
        float v = A[i * n + j];
        s += v * v;
    }
    partial[t] = s;
    __syncthreads();
    for (int stride = NT / 2; stride > 0; stride >>= 1) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) norms[j] = sqrtf(partial[0]);
}
