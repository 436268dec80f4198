// Array-syntax parameters (float src[], const int perm[]): a permutation scatter.
extern "C" __global__ void scatter_perm(const float src[], const int perm[], float dst[], int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[perm[i]] = src[i];
}
