// Small recursion in __device__ functions: a recursive lower-bound binary search and
// exponentiation by squaring.
__device__ int lower_bound_rec(const float* a, int lo, int hi, float key) {
    if (lo >= hi) return lo;
    int mid = lo + (hi - lo) / 2;
    return a[mid] < key ? lower_bound_rec(a, mid + 1, hi, key) : lower_bound_rec(a, lo, mid, key);
}

__device__ unsigned long long ipow(unsigned long long b, int e) {
    if (e == 0) return 1ull;
    unsigned long long h = ipow(b, e / 2);
    return (e % 2) ? h * h * b : h * h;
}

extern "C" __global__ void search_and_pow(const float* sorted, int m, const float* keys, int* pos, const int* base,
                                          unsigned long long* pw, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        pos[i] = lower_bound_rec(sorted, 0, m, keys[i]);
        pw[i] = ipow((unsigned long long)base[i], i % 13);
    }
}
