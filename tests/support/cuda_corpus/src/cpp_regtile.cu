// A register tile float acc[4][4] indexed only by unrolled constants: each thread loads
// one 4 x 4 tile and double-centres it (subtract row and column means, add the mean).
extern "C" __global__ void tile4_center(const float* in, float* out, int h, int w) {
    int tx = blockIdx.x * blockDim.x + threadIdx.x;
    int ty = blockIdx.y * blockDim.y + threadIdx.y;
    if (tx * 4 >= w || ty * 4 >= h) return;
    float acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = in[(ty * 4 + r) * w + tx * 4 + c];
    float rowm[4], colm[4], all = 0.0f;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        rowm[r] = 0.25f * (acc[r][0] + acc[r][1] + acc[r][2] + acc[r][3]);
        colm[r] = 0.25f * (acc[0][r] + acc[1][r] + acc[2][r] + acc[3][r]);
        all += rowm[r];
    }
    all *= 0.25f;
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) out[(ty * 4 + r) * w + tx * 4 + c] = acc[r][c] - rowm[r] - colm[c] + all;
}
