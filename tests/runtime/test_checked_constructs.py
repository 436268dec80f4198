"""Checked mode on the constructs that real CUDA code uses and a checker must neither
reject nor change: each kernel runs plain and checked on fresh random inputs, the two
results must be identical bit for bit and equal to NumPy's, and seeded bugs in the same
spellings must be found, with the right array and element."""
import numpy as np
import pytest

import cudacheck


def both(src, name, grid, block, make_args, shared_mem=0, **module):
    """Run `name` plain and checked on copies of the same inputs; return both argument lists."""
    out = []
    for check in (False, True):
        args = make_args()
        fn = cudacheck.RawModule(src, backend="cpu", check=check, **module).get_function(name)
        fn(grid, block, args, shared_mem=shared_mem)
        out.append(args)
    for a, b in zip(*out):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes(), f"checked run differs from the plain run:\n{a}\n{b}"
    return out[1]


def test_auto_copy_of_a_shared_element_keeps_its_value(rng):
    # `auto v = s[i];` is a copy: a later write to s[i] must not change v.
    src = r'''
    extern "C" __global__ void k(const float* x, float* y) {
        __shared__ float s[64];
        int i = threadIdx.x;
        s[i] = x[i];
        auto v = s[i];
        s[i] = 0.0f;
        y[i] = v + s[i] + float(sizeof(s[0]));
    }'''
    x = rng.standard_normal(64).astype(np.float32)
    _, y = both(src, "k", 1, 64, lambda: (x.copy(), np.zeros(64, np.float32)))
    np.testing.assert_array_equal(y, x + np.float32(4))


def test_references_to_shared_elements_and_compound_operators(rng):
    src = r'''
    template <class T> __device__ void bump(T& r, T v) { r += v; }
    extern "C" __global__ void k(const unsigned* x, unsigned* y, int n) {
        __shared__ unsigned s[32];
        int i = threadIdx.x;
        unsigned& r = s[i];
        r = x[i];
        r |= 1u; r <<= 2; r %= 1000u; r ^= 5u;
        bump(r, 3u);
        memset(&s[0], 0, 0);
        y[i] = s[i];
    }'''
    x = rng.integers(0, 1 << 20, 32, dtype=np.uint32)
    _, y, _ = both(src, "k", 1, 32, lambda: (x.copy(), np.zeros(32, np.uint32), 32))
    np.testing.assert_array_equal(y, ((((x | 1) << 2) % 1000) ^ 5) + 3)


def test_casts_of_extern_shared_and_of_global_pointers(rng):
    src = r'''
    extern "C" __global__ void k(const float* x, float* y, int n4) {
        extern __shared__ char smem[];
        float* s = (float*)smem;
        float4* s4 = reinterpret_cast<float4*>(smem);
        int i = threadIdx.x;
        if (i < n4) s4[i] = ((const float4*)x)[i];
        __syncthreads();
        float *a = s, *b = y;
        if (i < n4) { float2 p = ((float2*)a)[2 * i]; b[i] = p.x + p.y + s[4 * i + 3]; }
    }'''
    x = rng.standard_normal(128).astype(np.float32)
    _, y, _ = both(src, "k", 1, 32, lambda: (x.copy(), np.zeros(32, np.float32), 32), shared_mem=512)
    np.testing.assert_allclose(y, x[0::4] + x[1::4] + x[3::4], rtol=1e-6)


def test_volatile_warp_tail_with_syncwarp(rng):
    # The classic reduction tail on a volatile pointer, with the __syncwarp() modern GPUs need.
    src = r'''
    __device__ void warp_reduce(volatile float* s, int t) {
        for (int o = 32; o > 0; o /= 2) { float v = s[t] + s[t + o]; __syncwarp(); s[t] = v; __syncwarp(); }
    }
    extern "C" __global__ void k(const float* x, float* out) {
        __shared__ float s[128];
        int t = threadIdx.x;
        s[t] = x[blockIdx.x * 128 + t];
        __syncthreads();
        for (int o = 64; o > 32; o /= 2) { if (t < o) s[t] += s[t + o]; __syncthreads(); }
        if (t < 32) warp_reduce(s, t);
        if (t == 0) out[blockIdx.x] = s[0];
    }'''
    x = rng.standard_normal(512).astype(np.float32)
    _, out = both(src, "k", 4, 128, lambda: (x.copy(), np.zeros(4, np.float32)))
    np.testing.assert_allclose(out, x.reshape(4, 128).astype(np.float64).sum(1), rtol=1e-4, atol=1e-4)


def test_volatile_warp_tail_without_syncwarp_is_a_race(rng):
    # Without __syncwarp the tail relies on lock-step warps, which Volta ended: a race.
    src = r'''
    extern "C" __global__ void k(const float* x, float* out) {
        __shared__ float s[64];
        int t = threadIdx.x;
        s[t] = x[t];
        __syncthreads();
        volatile float* v = s;
        if (t < 32) { v[t] += v[t + 32]; v[t] += v[t + 16]; }
        if (t == 0) out[0] = v[0];
    }'''
    k = cudacheck.RawKernel(src, "k", backend="cpu", check=True)
    with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
        k(1, 64, (rng.standard_normal(64).astype(np.float32), np.zeros(1, np.float32)))
    assert e.value.array == "s"


@pytest.mark.parametrize("decl,arg", [
    ("typedef float real; extern \"C\" __global__ void k(real* y, int n)", "typedef"),
    ("extern \"C\" __global__ void k(float y[], int n)", "array syntax"),
])
def test_writes_past_the_end_are_found_through_any_spelling(decl, arg):
    src = decl + " { int i = threadIdx.x; if (i <= n) y[i] = 1.0f; }"
    k = cudacheck.RawKernel(src, "k", backend="cpu", check=True)
    y, z = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        k(1, 16, (y, 8))
    assert (e.value.array, e.value.index, e.value.thread, e.value.op) == ("y", (8,), (8, 0, 0), "write")
    assert not y.any() and not z.any()   # nothing came back


def test_struct_pointers_and_helpers_taking_typedefd_pointers(rng):
    src = r'''
    typedef float real;
    struct Particle { float x, y; int id; };
    __device__ void push(real* p, real v) { *p += v; }
    extern "C" __global__ void k(Particle* ps, real dt, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { push(&ps[i].x, dt * ps[i].y); ps[i].id = i; }
    }'''
    fn = cudacheck.RawKernel(src, "k", backend="cpu")
    dtype = fn.signature.params[0].dtype
    assert dtype.names == ("x", "y", "id") and dtype.itemsize == 12

    p0 = np.zeros(37, dtype)
    p0["x"], p0["y"] = rng.standard_normal(37), rng.standard_normal(37)

    def make():
        return (p0.copy(), 0.5, 37)
    (p, _, _) = both(src, "k", 2, 32, make)
    np.testing.assert_array_equal(p["x"], p0["x"] + np.float32(0.5) * p0["y"])
    np.testing.assert_array_equal(p["id"], np.arange(37))
    bad = cudacheck.RawKernel(src.replace("if (i < n)", "if (i <= n)"), "k", backend="cpu", check=True)
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        bad(2, 32, make())
    assert e.value.array == "ps" and e.value.thread == (5, 0, 0) and e.value.block == (1, 0, 0)


def test_atomics_on_shared_scalars_and_counters(rng):
    src = r'''
    extern "C" __global__ void k(const int* x, int* counts, unsigned* maxes) {
        __shared__ int count;
        __shared__ unsigned hi;
        if (threadIdx.x == 0) { count = 0; hi = 0; }
        __syncthreads();
        if (x[blockIdx.x * blockDim.x + threadIdx.x] > 0) atomicAdd(&count, 1);
        atomicMax(&hi, (unsigned)x[blockIdx.x * blockDim.x + threadIdx.x] & 1023u);
        __syncthreads();
        if (threadIdx.x == 0) { count++; counts[blockIdx.x] = count; maxes[blockIdx.x] = atomicExch(&hi, 0u); }
    }'''
    x = rng.integers(-100, 100, 256).astype(np.int32)
    _, counts, maxes = both(src, "k", 4, 64, lambda: (x.copy(), np.zeros(4, np.int32), np.zeros(4, np.uint32)))
    np.testing.assert_array_equal(counts, (x.reshape(4, 64) > 0).sum(1) + 1)
    np.testing.assert_array_equal(maxes, (x.reshape(4, 64).astype(np.uint32) & 1023).max(1))


def test_a_plain_store_racing_with_an_atomic_is_found():
    src = r'''
    extern "C" __global__ void k(int* out) {
        __shared__ int count;
        if (threadIdx.x == 0) count = 0;
        __syncthreads();
        atomicAdd(&count, 1);
        if (threadIdx.x == 5) count = 42;
        __syncthreads();
        if (threadIdx.x == 0) out[0] = count;
    }'''
    with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 32, (np.zeros(1, np.int32),))
    assert e.value.array == "count"


def test_a_read_after_atomic_exchange_is_initialized():
    src = r'''
    extern "C" __global__ void k(int* out) {
        __shared__ int flag;
        if (threadIdx.x == 0) atomicExch(&flag, 7);
        __syncthreads();
        out[threadIdx.x] = flag;
    }'''
    out = np.zeros(32, np.int32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 32, (out,))
    assert (out == 7).all()


def test_a_subscript_past_a_shared_dimension_names_every_index():
    src = r'''
    extern "C" __global__ void k(float* out) {
        __shared__ float a[4][8];
        __shared__ float b[4][8];
        a[threadIdx.y][threadIdx.x] = 1.0f;
        b[threadIdx.y][threadIdx.x] = 2.0f;
        __syncthreads();
        out[threadIdx.y * 8 + threadIdx.x] = a[threadIdx.y][threadIdx.x + 1];
    }'''
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, (8, 4), (np.zeros(32, np.float32),))
    assert (e.value.array, e.value.index, e.value.thread) == ("a", (0, 8), (7, 0, 0))


def test_a_local_array_overrun_is_named():
    src = r'''
    extern "C" __global__ void k(const int* idx, float* out) {
        float acc[4] = {0, 0, 0, 0};
        acc[idx[threadIdx.x]] = 1.0f;
        out[threadIdx.x] = acc[0];
    }'''
    idx = np.array([0, 1, 2, 3, 4, 0, 0, 0], np.int32)
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 8, (idx, np.zeros(8, np.float32)))
    assert e.value.array == "acc" and e.value.index == (4,) and e.value.thread == (4, 0, 0)
