// A template with several parameters and defaults: the element type, the block size (which
// sizes the shared array) and a flag. Each block reverses its chunk of the array.
template <typename T, int BLOCK = 128, bool NEGATE = false>
__global__ void block_reverse(const T* in, T* out, int n) {
    __shared__ T s[BLOCK];
    int base = blockIdx.x * BLOCK;
    int t = threadIdx.x;
    int cnt = min(BLOCK, n - base);
    if (t < cnt) s[t] = in[base + t];
    __syncthreads();
    if (t < cnt) {
        T v = s[cnt - 1 - t];
        out[base + t] = NEGATE ? -v : v;
    }
}
