// Two overlapping views of one array, dst = x[:-1] and src = x[1:]: x[i] = x[i+1] - x[i].
// A single block: every thread reads all its elements into registers, a barrier, then
// the writes, so that no read sees a new value.
extern "C" __global__ void forward_diff_views(float* dst, const float* src, int n) {
    float v[4];
    int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        int i = t + k * blockDim.x;
        v[k] = (i < n) ? src[i] - dst[i] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        int i = t + k * blockDim.x;
        if (i < n) dst[i] = v[k];
    }
}
