// 64-bit indices: a strided gather where i * stride would overflow 32 bits for large
// inputs, so the index is computed in long long from the start; int64 data.
extern "C" __global__ void strided_gather_i64(const long long* in, long long* out, long long stride, long long offset,
                                              long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[offset + i * stride] * 3 - i;
}
