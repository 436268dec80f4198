// The C++ that real CUDA code is written in: namespaces, C++ linkage, templates with
// several parameters and defaults, launch bounds from macros, structs, typedefs,
// references, lambdas, recursion, operator overloading, local arrays.
#define BM 64
#define BN 32
#define TM 4
#define TN 4
typedef float real;
typedef unsigned int uint;

namespace physics {
struct __align__(16) Particle {
    float3 pos;
    float mass;
    float3 vel;
    int id;
};

__device__ void advance(Particle& p, real dt) {
    p.pos.x += p.vel.x * dt;
    p.pos.y += p.vel.y * dt;
    p.pos.z += p.vel.z * dt;
}

__global__ void step(Particle* ps, real dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        advance(ps[i], dt);
        ps[i].id = i;
    }
}
}  // namespace physics

template <typename T, int BLOCK = 128, bool CLAMP = false>
__global__ void scale_clamp(const T* in, T* out, T s, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) {
        T v = in[i] * s;
        if (CLAMP) v = v < T(0) ? T(0) : v;
        out[i] = v;
    }
}

__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1) tile_fill(float* out, int rows, int cols) {
    float acc[TM][TN];
#pragma unroll
    for (int a = 0; a < TM; ++a)
#pragma unroll
        for (int b = 0; b < TN; ++b) acc[a][b] = float(a * TN + b);
    int r0 = blockIdx.y * BM + (threadIdx.x / (BN / TN)) * TM;
    int c0 = blockIdx.x * BN + (threadIdx.x % (BN / TN)) * TN;
    for (int a = 0; a < TM; ++a)
        for (int b = 0; b < TN; ++b)
            if (r0 + a < rows && c0 + b < cols) out[(r0 + a) * cols + c0 + b] = acc[a][b] + r0 + c0;
}

__device__ uint bump(uint* counter, uint by) { return atomicAdd(counter, by); }

__global__ void typedef_helpers(const uint* keys, uint* counts, real* out, real w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        bump(&counts[keys[i] % 8], 1u);
        real* dst = out + i;
        *dst = w * (real)keys[i];
    }
}

__global__ void array_syntax(const int idx[], float vals[], float out[], int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = vals[idx[i]] * 2.0f;
}

__global__ void shared_refs(const float* in, float* out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    float& mine = s[t];
    mine = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    auto left = s[(t + blockDim.x - 1) % blockDim.x];   // a copy: the write below must not change it
    __syncthreads();
    mine += 1.0f;
    if (i < n) out[i] = left + mine + float(sizeof(s[0]));
}

__global__ void with_lambda(const float* in, float* out, float k, int n) {
    auto f = [k](float v) { return v > 0.0f ? k * v : v / k; };
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f(in[i]);
}

__device__ unsigned long long fact(int k) { return k <= 1 ? 1ull : k * fact(k - 1); }
__device__ int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

__global__ void recursion(const int* a, const int* b, int* g, unsigned long long* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        g[i] = gcd(a[i], b[i]);
        f[i] = fact(a[i] % 15);
    }
}

struct Complex {
    float re, im;
    __device__ Complex operator*(const Complex& o) const { return {re * o.re - im * o.im, re * o.im + im * o.re}; }
    __device__ Complex operator+(const Complex& o) const { return {re + o.re, im + o.im}; }
    __device__ float norm2() const { return re * re + im * im; }
};

__global__ void mandelbrot(int* iters, int w, int h, int max_iter) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    Complex c{-2.0f + 2.5f * x / w, -1.25f + 2.5f * y / h}, z{0.0f, 0.0f};
    int k = 0;
    while (k < max_iter && z.norm2() <= 4.0f) {
        z = z * z + c;
        ++k;
    }
    iters[y * w + x] = k;
}

__global__ void local_histogram(const unsigned char* in, int* out, int per_thread, int n) {
    int counts[8] = {0};
    int start = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
    for (int j = 0; j < per_thread; ++j)
        if (start + j < n) counts[in[start + j] & 7]++;
    for (int b = 0; b < 8; ++b) atomicAdd(&out[b], counts[b]);
}

__global__ void inplace_twice(float* a, float* b, int n) {   // called with a == b
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] * a[i] + 1.0f;
}

// dst is src shifted by one element of the same array: read all, then write all.
__global__ void shift_views(const int* src, int* dst, int n) {
    int i = threadIdx.x;
    int v = (i < n) ? src[i] : 0;
    __syncthreads();
    if (i < n) dst[i] = v + 1;
}

__global__ void through_const_cast(const float* in, float* sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float* w = const_cast<float*>(in);
        w[i] = 2.0f * in[i];
        atomicAdd(sum, 1.0f);
    }
}

template <typename Op>
__device__ float apply_twice(Op op, float v) { return op(op(v)); }
struct Square { __device__ float operator()(float v) const { return v * v; } };

__global__ void functor(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = apply_twice(Square(), in[i]);
}

__device__ float& pick(float* a, float* b, bool first) { return first ? *a : *b; }

__global__ void ref_returning(float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pick(a + i, b + i, i % 2 == 0) += 10.0f;
}
