// Kernels inside nested namespaces, helpers in a detail namespace (as libraries lay them
// out); the host asks for "imgproc::v2::invert_threshold".
namespace imgproc {
namespace detail {
__device__ __forceinline__ unsigned char invert(unsigned char v) { return (unsigned char)(255 - v); }
}  // namespace detail

namespace v2 {
__global__ void invert_threshold(const unsigned char* in, unsigned char* out, unsigned char thr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned char v = detail::invert(in[i]);
        out[i] = v > thr ? v : 0;
    }
}
}  // namespace v2
}  // namespace imgproc
