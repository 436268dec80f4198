// The 1-D stencil of NVIDIA's "CUDA C/C++ Basics" slides, radius 2, with weights in
// constant memory and guards for the domain's edges: the first RADIUS threads of a block
// load both halos.
#define RADIUS 2
#define BLOCK_SIZE 64
__constant__ float weights[2 * RADIUS + 1];

extern "C" __global__ void stencil_1d(const float* in, float* out, int n) {
    __shared__ float temp[BLOCK_SIZE + 2 * RADIUS];
    int gindex = threadIdx.x + blockIdx.x * blockDim.x;
    int lindex = threadIdx.x + RADIUS;

    // Read input elements into shared memory
    temp[lindex] = gindex < n ? in[gindex] : 0.0f;
    if (threadIdx.x < RADIUS) {
        temp[lindex - RADIUS] = gindex - RADIUS >= 0 ? in[gindex - RADIUS] : 0.0f;
        temp[lindex + BLOCK_SIZE] = gindex + BLOCK_SIZE < n ? in[gindex + BLOCK_SIZE] : 0.0f;
    }

    // Synchronize (ensure all the data is available)
    __syncthreads();

    // Apply the stencil
    float result = 0.0f;
    for (int offset = -RADIUS; offset <= RADIUS; offset++)
        result += weights[offset + RADIUS] * temp[lindex + offset];

    // Store the result
    if (gindex < n) out[gindex] = result;
}
