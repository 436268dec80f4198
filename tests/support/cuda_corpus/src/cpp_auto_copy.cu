// `auto v = s[i];` is a copy: after s[i] is overwritten, v keeps the old value; `auto&`
// is a reference and sees every change.
extern "C" __global__ void auto_keeps_old(const int* in, int* out, int n) {
    __shared__ int s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? in[i] : 0;
    auto v = s[t];
    s[t] = v * 3 + 1;
    auto& r = s[t];
    r -= 1;
    decltype(v) w = r + v;
    if (i < n) out[i] = v * 10000 + w;
}
