// The bounds-checked tiled kernel with its tile size chosen at run time: the tiles live
// in dynamic shared memory, sized by the launch (shared_mem = 2 * tile * tile * 4
// bytes), and the tile width is the block's width. One compiled kernel serves every
// tile size, so a program can pick the tile from the device's properties.
extern "C" __global__ void matmul_tiled_dynamic(const float* M, const float* N, float* P,
                                                int m, int k, int n) {
    extern __shared__ float tiles[];
    const int tile = blockDim.x;           // blocks are tile x tile
    float* Mds = tiles;                    // tile * tile floats
    float* Nds = tiles + tile * tile;      // the next tile * tile floats
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * tile + ty;
    int col = blockIdx.x * tile + tx;

    float sum = 0.0f;
    for (int ph = 0; ph < (k + tile - 1) / tile; ++ph) {
        int mcol = ph * tile + tx;
        int nrow = ph * tile + ty;
        Mds[ty * tile + tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nds[ty * tile + tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < tile; ++i)
            sum += Mds[ty * tile + i] * Nds[i * tile + tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
