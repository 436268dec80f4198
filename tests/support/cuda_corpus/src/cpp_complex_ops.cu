// Operator overloading on a small struct: complex multiply, add and compound assignment.
struct Cplx {
    float re, im;
};

__device__ __forceinline__ Cplx operator*(Cplx a, Cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
__device__ __forceinline__ Cplx operator+(Cplx a, Cplx b) { return {a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ Cplx& operator+=(Cplx& a, Cplx b) { a = a + b; return a; }
__device__ __forceinline__ Cplx conjugate(Cplx a) { return {a.re, -a.im}; }

extern "C" __global__ void cmul_accumulate(const Cplx* a, const Cplx* b, Cplx* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] += a[i] * conjugate(b[i]);
}
