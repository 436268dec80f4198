// Batched 4 x 4 matrix products, 16 threads per product (one per element) and 8 products
// per block, the operands staged as structs in shared memory.
struct Mat4s {
    float m[4][4];
};

extern "C" __global__ void batched_mat4_shared(const float* A, const float* B, float* C, int batch) {
    __shared__ Mat4s sa[8], sb[8];
    int e = threadIdx.x, r = e / 4, c = e % 4, k = threadIdx.y;
    int mat = blockIdx.x * 8 + k;
    sa[k].m[r][c] = (mat < batch) ? A[mat * 16 + e] : 0.0f;
    sb[k].m[r][c] = (mat < batch) ? B[mat * 16 + e] : 0.0f;
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int q = 0; q < 4; ++q) acc += sa[k].m[r][q] * sb[k].m[q][c];
    if (mat < batch) C[mat * 16 + e] = acc;
}
