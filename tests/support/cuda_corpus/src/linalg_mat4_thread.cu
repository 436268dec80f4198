// Batched 4 x 4 matrix products, a struct per matrix, one thread per product; the
// multiply is a __device__ function on const references.
struct Mat4 {
    float m[4][4];
};

__device__ Mat4 mul(const Mat4& a, const Mat4& b) {
    Mat4 c;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < 4; ++k) s += a.m[i][k] * b.m[k][j];
            c.m[i][j] = s;
        }
    return c;
}

extern "C" __global__ void batched_mat4_thread(const Mat4* A, const Mat4* B, Mat4* C, int batch) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < batch) C[b] = mul(A[b], B[b]);
}
