// Element-wise kernels in the launch styles people use: grid-stride loops, vector loads
// through casts, 2-D and 3-D grids, pitched rows, 64-bit indices, small element types.
extern "C" __global__ void saxpy_grid_stride(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void vadd_float4(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 va = reinterpret_cast<const float4*>(a)[i];
        float4 vb = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(va.x + vb.x, va.y + vb.y, va.z + vb.z, va.w + vb.w);
    }
    if (i == 0)
        for (int j = 4 * n4; j < n; ++j) c[j] = a[j] + b[j];   // the tail
}

extern "C" __global__ void scale_c_cast(float* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        float2 v = ((float2*)x)[i];
        v.x *= s;
        v.y *= s;
        ((float2*)x)[i] = v;
    }
    if (i == 0 && (n & 1)) x[n - 1] *= s;
}

extern "C" __global__ void activations(const float* x, float* relu, float* sig, float* gelu, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        relu[i] = fmaxf(v, 0.0f);
        sig[i] = 1.0f / (1.0f + expf(-v));
        gelu[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
    }
}

__constant__ float coeffs[6];
extern "C" __global__ void horner(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], r = coeffs[5];
    for (int k = 4; k >= 0; --k) r = fmaf(r, v, coeffs[k]);
    y[i] = r;
}

// Rows `pitch` elements apart, only `width` of them used.
extern "C" __global__ void pitched_add(float* m, size_t pitch, int width, int height, float v) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = (float*)((char*)m + y * pitch);
        row[x] += v;
    }
}

extern "C" __global__ void grid3d_index(int* out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z;
}

extern "C" __global__ void gather_int64(const double* src, const long long* idx, double* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[idx[i]];
}

extern "C" __global__ void bytes_and_bools(const unsigned char* a, const short* b, bool* flags, signed char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        flags[i] = a[i] > 127 && b[i] < 0;
        out[i] = (signed char)((a[i] ^ (unsigned char)b[i]) & 0x7f) - 64;
    }
}

extern "C" __global__ void daxpy_unrolled(double a, const double* x, double* y, int n) {
    int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int k = 0; k < 4; ++k)
        if (i + k < n) y[i + k] += a * x[i + k];
}

extern "C" __global__ void clamp_uint(const int* in, unsigned int* out, int lo, int hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned int)min(max(in[i], lo), hi);
}

extern "C" __global__ void rgb_to_gray(const uchar4* rgba, unsigned char* gray, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uchar4 p = rgba[i];
        gray[i] = (unsigned char)(0.299f * p.x + 0.587f * p.y + 0.114f * p.z);
    }
}

extern "C" __global__ void complex_mul(const float2* a, const float2* b, float2* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = make_float2(a[i].x * b[i].x - a[i].y * b[i].y, a[i].x * b[i].y + a[i].y * b[i].x);
}

extern "C" __global__ void bit_tricks(const unsigned int* in, unsigned int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = in[i];
        v |= 1u;
        v <<= 3;
        v %= 1000003u;
        v ^= __brev(v) >> 16;
        out[i] = v + __popc(v) + __clz((int)v);
    }
}
