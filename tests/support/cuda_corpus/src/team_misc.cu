#include <math_constants.h>

// Simulation and image-processing kernels: an all-pairs n-body step with shared tiles
// (GPU Gems 3, ch. 31), separable filters, a box blur on uchar4 pixels, thresholding,
// hashing and normalization.
extern "C" __global__ void nbody_accel(const float4* bodies, float3* accel, int n, float eps2) {
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = (i < n) ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int start = 0; start < n; start += blockDim.x) {
        int j = start + threadIdx.x;
        tile[threadIdx.x] = (j < n) ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < blockDim.x; ++k) {
            float4 o = tile[k];
            float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(d2);
            float s = o.w * inv * inv * inv;
            a.x += dx * s;
            a.y += dy * s;
            a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n) accel[i] = a;
}

#define R 2
extern "C" __global__ void filter_rows(const float* in, float* out, const float* w, int h, int width) {
    __shared__ float row[64 + 2 * R];
    int x = blockIdx.x * 64 + threadIdx.x, y = blockIdx.y;
    row[threadIdx.x + R] = (x < width) ? in[y * width + x] : 0.0f;
    if (threadIdx.x < R) {
        int l = x - R, r = x + 64;
        row[threadIdx.x] = (l >= 0) ? in[y * width + l] : 0.0f;
        row[threadIdx.x + 64 + R] = (r < width) ? in[y * width + r] : 0.0f;
    }
    __syncthreads();
    if (x < width) {
        float s = 0.0f;
        for (int k = -R; k <= R; ++k) s += w[k + R] * row[threadIdx.x + R + k];
        out[y * width + x] = s;
    }
}

extern "C" __global__ void filter_columns(const float* in, float* out, const float* w, int h, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= h) return;
    float s = 0.0f;
    for (int k = -R; k <= R; ++k) {
        int yy = y + k;
        if (yy >= 0 && yy < h) s += w[k + R] * in[yy * width + x];
    }
    out[y * width + x] = s;
}

extern "C" __global__ void box_blur_rgba(const uchar4* in, uchar4* out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int4 acc = make_int4(0, 0, 0, 0);
    int count = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
            uchar4 p = in[yy * w + xx];
            acc.x += p.x; acc.y += p.y; acc.z += p.z; acc.w += p.w;
            ++count;
        }
    out[y * w + x] = make_uchar4(acc.x / count, acc.y / count, acc.z / count, acc.w / count);
}

extern "C" __global__ void threshold(const unsigned char* img, unsigned char* out, unsigned char t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = img[i] > t ? 255 : 0;
}

// A hash per element (xorshift-multiply), then a count of how many hashes are even.
__device__ unsigned int hash32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

extern "C" __global__ void hash_even(const unsigned int* keys, unsigned int* hashes, int* even, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int h = hash32(keys[i]);
        hashes[i] = h;
        if ((h & 1u) == 0) atomicAdd(even, 1);
    }
}

extern "C" __global__ void normalize3(float3* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 p = v[i];
        float inv = rnorm3df(p.x, p.y, p.z);
        v[i] = make_float3(p.x * inv, p.y * inv, p.z * inv);
    }
}

// Sum of squares in double precision with double atomics (order varies between runs).
extern "C" __global__ void sum_squares_double(const double* x, double* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i] * x[i]);
}

// Counts each lowercase letter of a text, per block in shared memory.
extern "C" __global__ void letter_counts(const char* text, unsigned int* counts, int n) {
    __shared__ unsigned int c[26];
    if (threadIdx.x < 26) c[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        char ch = text[i];
        if (ch >= 'a' && ch <= 'z') atomicAdd(&c[ch - 'a'], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 26) atomicAdd(&counts[threadIdx.x], c[threadIdx.x]);
}

// Matrix row softmax, a block per row: max, then sum of exponentials, both in shared memory.
extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
    __shared__ float red[128];
    const float* row = x + blockIdx.x * cols;
    float m = -CUDART_INF_F;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = expf(row[c] - m) / sum;
}
