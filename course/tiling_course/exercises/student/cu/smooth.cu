// The kernel of chapter 2's counting exercises: each thread mixes four samples of a
// with its element of b and its neighbour's. Launched on N = 1024 threads in blocks of
// 128: a holds 4 * N floats, b holds N.
extern "C" __global__ void smooth(const float* a, float* b) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v[4];
    __shared__ float gain;
    __shared__ float bs[128];

    for (int s = 0; s < 4; ++s)
        v[s] = a[s * gridDim.x * blockDim.x + t];
    if (threadIdx.x == 0)
        gain = 0.25f;
    bs[threadIdx.x] = b[t];
    __syncthreads();
    int next = (threadIdx.x + 1) % 128;
    b[t] = gain * (v[0] + v[1] + v[2] + v[3]) + 0.5f * (bs[threadIdx.x] + bs[next]);
}
