// A student's typedefs (real, uint) on pointers handed to __device__ helpers: pack the
// comparisons x > thr into 32-bit words, and an axpy on the side.
typedef float real;
typedef unsigned int uint;

__device__ uint pack_word(const real* x, real thr, int start, int n) {
    uint w = 0;
    for (int b = 0; b < 32; ++b)
        if (start + b < n && x[start + b] > thr) w |= 1u << b;
    return w;
}

__device__ void axpy1(real* y, const real* x, real a, int i) { y[i] += a * x[i]; }

extern "C" __global__ void typedef_pack(const real* x, uint* bits, real* y, real a, real thr, int n, int nwords) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nwords) bits[i] = pack_word(x, thr, i * 32, n);
    if (i < n) axpy1(y, x, a, i);
}
