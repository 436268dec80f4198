// Bad launches and what cudaGetLastError says of each, printed one per line: the GPU and
// the CPU runtime must print the same (tests/runtime/test_programs.py).
#include <cstdio>
__global__ void k(float* x) { if (x) x[0] = 1.0f; }
__global__ void __launch_bounds__(128) b(float* x) { if (x) x[0] = 1.0f; }
__global__ void s(float* x) { __shared__ float t[12288]; t[threadIdx.x] = 1.0f; if (x) x[0] = t[0]; }
static void said(const char* label) { printf("%-28s %s\n", label, cudaGetErrorName(cudaGetLastError())); }
int main() {
    k<<<1, dim3(1024, 1, 1)>>>(nullptr); said("block (1024, 1, 1)");
    k<<<1, dim3(2048, 1, 1)>>>(nullptr); said("block (2048, 1, 1)");
    k<<<1, dim3(64, 64, 1)>>>(nullptr); said("block (64, 64, 1)");
    k<<<1, dim3(32, 32, 2)>>>(nullptr); said("block (32, 32, 2)");
    k<<<1, dim3(1, 1, 65)>>>(nullptr); said("block (1, 1, 65)");
    k<<<1, dim3(0, 1, 1)>>>(nullptr); said("block (0, 1, 1)");
    k<<<dim3(0, 1, 1), 32>>>(nullptr); said("grid (0, 1, 1)");
    k<<<dim3(1, 65536, 1), 32>>>(nullptr); said("grid (1, 65536, 1)");
    k<<<dim3(1, 1, 65536), 32>>>(nullptr); said("grid (1, 1, 65536)");
    k<<<dim3(2147483648u, 1, 1), 32>>>(nullptr); said("grid (2147483648, 1, 1)");
    k<<<1, 32, 49152>>>(nullptr); said("dynamic shared 49152");
    k<<<1, 32, 49153>>>(nullptr); said("dynamic shared 49153");
    s<<<1, 32, 4>>>(nullptr); said("static 48 KiB + dynamic 4");
    k<<<1, 32, 300000>>>(nullptr); said("dynamic shared 300000");
    b<<<1, 128>>>(nullptr); said("launch bounds 128, block 128");
    b<<<1, 256>>>(nullptr); said("launch bounds 128, block 256");
    cudaDeviceSynchronize();
    printf("last: %s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
