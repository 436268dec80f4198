"""Code people copy from NVIDIA's samples, textbooks and course labs runs on the CPU runtime
as on a GPU, and what a GPU's compiler refuses is refused here too, with its reason."""
import textwrap

import numpy as np
import pytest

import cudacheck


def _kernel(src, name, grid, block, args, shared_mem=0, **kw):
    cudacheck.RawKernel(textwrap.dedent(src), name, backend="cpu", **kw)(grid, block, args, shared_mem=shared_mem)
    return args


def test_samples_shared_memory_helper():
    """The samples' SharedMemory<T>: an extern __shared__ array declared in a template
    struct's conversion operator, as the reduction code most courses copy declares it."""
    src = '''
        template <class T> struct SharedMemory {
            __device__ inline operator T*() { extern __shared__ int __smem[]; return (T*)__smem; }
        };
        template <> struct SharedMemory<double> {
            __device__ inline operator double*() { extern __shared__ double __smem_d[]; return (double*)__smem_d; }
        };
        template <class T> __device__ void reduce(const T* in, T* out, int n) {
            T* s = SharedMemory<T>();
            unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
            s[t] = i < n ? in[i] : T(0);
            __syncthreads();
            for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
                if (t < k) s[t] += s[t + k];
                __syncthreads();
            }
            if (t == 0) out[blockIdx.x] = s[0];
        }
        extern "C" __global__ void reduce_d(const double* in, double* out, int n) { reduce(in, out, n); }
        extern "C" __global__ void reduce_i(const int* in, int* out, int n) { reduce(in, out, n); }
    '''
    rng = np.random.default_rng()
    n = int(rng.integers(300, 1000))
    x = rng.standard_normal(n)
    out = np.zeros(-(-n // 128))
    for check in (False, True):
        _kernel(src, "reduce_d", out.size, 128, (x, out, np.int32(n)), shared_mem=128 * 8, check=check)
        np.testing.assert_allclose(out.sum(), x.sum(), rtol=1e-12)
    xi = rng.integers(-1000, 1000, n).astype(np.int32)
    oi = np.zeros(-(-n // 64), np.int32)
    _kernel(src, "reduce_i", oi.size, 64, (xi, oi, np.int32(n)), shared_mem=64 * 4)
    assert oi.sum() == xi.sum()


def test_own_definition_of_a_cuda_builtin_name():
    """NVRTC accepts a kernel's own umin: CUDA declares it without defining it."""
    src = '''
        __device__ unsigned umin(unsigned a, unsigned b) { return a < b ? b : a; }   // deliberately the max
        extern "C" __global__ void f(unsigned* o, unsigned a, unsigned b) { o[0] = umin(a, b); o[1] = umax(a, b); }
    '''
    o = _kernel(src, "f", 1, 1, (np.zeros(2, np.uint32), np.uint32(3), np.uint32(9)))[0]
    assert o.tolist() == [9, 9]


def test_cuda_arch_is_the_reported_compute_capability():
    src = '''
        #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 350
        #error this kernel needs compute capability 3.5
        #endif
        extern "C" __global__ void f(int* o) { o[0] = __CUDA_ARCH__; }
    '''
    assert _kernel(src, "f", 1, 1, (np.zeros(1, np.int32),))[0][0] == 900


@pytest.mark.parametrize("decl, call", [
    ('extern "C" __device__ int system(const char*);', 'system("touch {marker}")'),
    ('extern "C" int system(const char*);', 'system("touch {marker}")'),
    ('__device__ int helper(const char*);', 'helper("{marker}")'),
    ('extern "C" __device__ int system(const char*); __device__ int (*p)(const char*) = &system;',
     'p("touch {marker}")'),
])
def test_device_code_may_call_only_device_functions(tmp_path, decl, call):
    """A function the source declares but never defines, or one of the C library, is a
    CompileError naming it (ptxas: Unresolved extern function), and it never runs."""
    marker = tmp_path / "ran"
    src = f'{decl}\nextern "C" __global__ void f(int* o) {{ o[0] = {call.format(marker=marker)}; }}\n'
    with pytest.raises(cudacheck.CompileError) as e:
        _kernel(src, "f", 1, 1, (np.zeros(1, np.int32),))
    name = "helper" if "helper" in decl else "system"
    assert name in str(e.value)
    assert not marker.exists()


def test_views_point_into_their_whole_allocation():
    """A kernel given x[3:] reads in[-3], which is x[0], and writes through it, as on a GPU
    (the slides' stencil, launched on d_in + RADIUS)."""
    src = '''
        extern "C" __global__ void stencil(const float* in, float* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) { float s = 0; for (int k = -3; k <= 3; ++k) s += in[i + k]; out[i] = s; }
        }
        extern "C" __global__ void poke(float* p) { p[-1] = 42.0f; }
    '''
    rng = np.random.default_rng()
    n = int(rng.integers(100, 400))
    x = rng.standard_normal(n + 6).astype(np.float32)
    out = np.zeros(n, np.float32)
    _kernel(src, "stencil", -(-n // 64), 64, (x[3:], out, np.int32(n)))
    want = np.convolve(x.astype(np.float64), np.ones(7), mode="valid")
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    y = np.zeros(8, np.float32)
    _kernel(src, "poke", 1, 1, (y[2:],))
    assert y[1] == 42 and np.count_nonzero(y) == 1


def test_thread_group_takes_any_group():
    src = '''
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        __device__ int sum(cg::thread_group g, int* s, int v) {
            unsigned r = g.thread_rank();
            s[r] = v;
            g.sync();
            for (unsigned k = g.size() / 2; k > 0; k /= 2) {
                if (r < k) s[r] += s[r + k];
                g.sync();
            }
            return s[0];
        }
        extern "C" __global__ void f(const int* x, int* block_sums, int* tile_sums) {
            __shared__ int s[128], t[128];
            cg::thread_block b = cg::this_thread_block();
            int v = x[blockIdx.x * blockDim.x + threadIdx.x];
            int total = sum(b, s, v);
            if (b.thread_rank() == 0) block_sums[blockIdx.x] = total;
            cg::thread_group tile = cg::tiled_partition(b, 16);
            int part = sum(tile, t + b.thread_rank() / 16 * 16, v);
            if (tile.thread_rank() == 0) tile_sums[blockIdx.x * 8 + b.thread_rank() / 16] = part;
        }
    '''
    x = np.random.default_rng().integers(-50, 50, 256).astype(np.int32)
    bs, ts = np.zeros(2, np.int32), np.zeros(16, np.int32)
    _kernel(src, "f", 2, 128, (x, bs, ts), check=True)
    assert bs.tolist() == x.reshape(2, -1).sum(1).tolist()
    assert ts.tolist() == x.reshape(16, -1).sum(1).tolist()


PROGRAM = r'''
#include <cstdio>
__constant__ float coeffs[4];
__device__ int counter;
__global__ void hello(int x, float* o) { printf("device %d\n", x); o[0] = coeffs[2]; counter = x * 2; }
int main() {
    float h[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    cudaMemcpyToSymbol(coeffs, h, sizeof h);
    cudaError_t big = cudaMemcpyToSymbol(coeffs, h, sizeof h, 4);
    size_t limit = 0;
    cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 22);
    cudaDeviceGetLimit(&limit, cudaLimitPrintfFifoSize);
    float* o;
    cudaMalloc(&o, sizeof(float));
    hello<<<1, 1>>>(7, o);
    printf("host after launch\n");
    cudaDeviceSynchronize();
    printf("host after sync\n");
    int c = 0;
    cudaMemcpyFromSymbol(&c, counter, sizeof c);
    float r;
    cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost);
    printf("coeff %g counter %d limit %zu offset-copy %d\n", r, c, limit, (int)big);
    cudaGetLastError();
    float* p = nullptr;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 50);
    printf("malloc %d %s %s\n", (int)e, cudaGetErrorName(e), cudaGetErrorString(e));
    printf("last %d\n", (int)cudaGetLastError());
    cudaFree(o);
    return 0;
}
'''


def test_whole_program_symbols_limits_printf_order_and_failed_malloc():
    """As the H100 ran it (tests/data/gpu_semantics.json, "program"): device printf appears at
    the next synchronization, after the host's own line; a cudaMalloc larger than the device
    returns cudaErrorMemoryAllocation to the program's own check."""
    out = cudacheck.run_program(PROGRAM).stdout.splitlines()
    assert out == ["host after launch", "device 7", "host after sync",
                   "coeff 3.5 counter 14 limit 4194304 offset-copy 1",
                   "malloc 2 cudaErrorMemoryAllocation out of memory", "last 2"]


STRUCT = '''
struct Params { float scale; int offset; double bias; };
extern "C" __global__ void affine(float* out, const float* in, Params p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * p.scale + (float)(p.offset + p.bias);
}
'''


def test_struct_by_value():
    """A struct parameter by value takes a NumPy structured scalar of its layout, as CuPy
    takes it; anything else is refused with the layout to build."""
    k = cudacheck.RawKernel(STRUCT, "affine", backend="cpu")
    dtype = k.signature.params[2].dtype
    p = np.zeros((), dtype)[()]
    p["scale"], p["offset"], p["bias"] = 1.5, 3, 0.25
    x = np.random.default_rng().standard_normal(200).astype(np.float32)
    out = np.zeros_like(x)
    k(4, 64, (out, x, p, np.int32(200)))
    np.testing.assert_allclose(out, x * np.float32(1.5) + np.float32(3.25), rtol=1e-6, atol=1e-6)
    with pytest.raises(cudacheck.ArgumentError, match="structured scalar"):
        k(4, 64, (out, x, 1.5, np.int32(200)))


MACRO_LAUNCHES = r'''
#include <cstdio>
#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)
#define CHECKED_LAUNCH(k, g, b, ...) \
    do { k<<<g, b>>>(__VA_ARGS__); if (cudaGetLastError() != cudaSuccess) printf("launch failed\n"); } while (0)
__global__ void add(int* o, int v) { o[threadIdx.x] += v; }
__global__ void twice(int* o) { o[threadIdx.x] *= 2; }
int main() {
    int* d;
    cudaMalloc(&d, 4 * sizeof(int));
    cudaMemset(d, 0, 4 * sizeof(int));
    LAUNCH(add, 1, 4, d, V);
    if (d) LAUNCH(twice, 1, 4, d);
    CHECKED_LAUNCH(add, 1, 4, d, 1);
    CHECKED_LAUNCH(add, 1, 2000, d, 1);
    int h[4];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
    cudaFree(d);
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_launches_written_through_macros(check):
    """A launch a variadic macro writes out, used as a statement (under an `if` too), each
    use its own launch: a launch of too many threads fails for the program's own check."""
    v = int(np.random.default_rng().integers(1, 100))
    out = cudacheck.run_program(MACRO_LAUNCHES.replace("d, V)", f"d, {v})"), check=check).stdout
    assert out.splitlines() == ["launch failed", " ".join([str(2 * v + 1)] * 4)]
