"""The GPU backend's own behaviour: the same checks and messages as the CPU runtime.
Skipped cleanly without CuPy and a CUDA GPU."""
import ctypes
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudacheck

pytestmark = pytest.mark.gpu


def test_compile_error_on_gpu_shows_numbered_lines():
    code = textwrap.dedent('''\
        extern "C" __global__ void broken(float* x) {
            x[threadIdx.x] = undefined_name;
        }''')
    with pytest.raises(cudacheck.CompileError) as e:
        cudacheck.RawKernel(code, "broken", backend="gpu").compile()
    assert "line 2" in str(e.value) and "undefined_name" in str(e.value) and e.value.backend == "gpu"


def test_argument_and_launch_checks_on_gpu():
    import cupy
    k = cudacheck.RawKernel(
        'extern "C" __global__ void f(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1; }',
        "f", backend="gpu")
    with pytest.raises(cudacheck.ArgumentError, match="float64"):
        k(1, 32, (cupy.zeros(32), 32))
    with pytest.raises(cudacheck.ArgumentError, match="CuPy array"):
        k(1, 32, (np.zeros(32, np.float32), 32))
    with pytest.raises(cudacheck.LaunchConfigError, match="1056 threads"):
        k(1, (32, 33), (cupy.zeros(32, cupy.float32), 32))
    x = cupy.zeros(32, cupy.float32)
    k(1, 32, (x, np.int64(16)))
    assert float(x.sum()) == 16


def test_dynamic_shared_memory_beyond_48k_with_the_opt_in():
    import cupy
    k = cudacheck.RawKernel(r'''
        extern "C" __global__ void big(float* out, int n) {
            extern __shared__ float s[];
            for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
            __syncthreads();
            if (threadIdx.x == 0) out[0] = s[n - 1];
        }''', "big", backend="gpu")
    n = 64 * 1024 // 4
    out = cupy.zeros(1, cupy.float32)
    k.max_dynamic_shared_size_bytes = 4 * n     # as CuPy asks
    k(1, 256, (out, n), shared_mem=4 * n)
    assert float(out[0]) == n - 1


ILLEGAL = r'''
import cudacheck, cupy
k = cudacheck.RawKernel('extern "C" __global__ void wild(float* p) { p[threadIdx.x + (1L << 36)] = 1.0f; }', "wild",
                        backend="gpu")
try:
    k(1, 32, (cupy.zeros(32, cupy.float32),), sync=True)   # waits: the error stops at this line
except cudacheck.GPUContextError as e:
    print("CAUGHT", e)
'''


def test_illegal_address_is_explained():
    # In a child process: the error poisons the CUDA context of whoever runs it.
    proc = subprocess.run([sys.executable, "-c", ILLEGAL], capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert "CAUGHT" in out, proc.stdout + proc.stderr
    assert "restart" in out and "backend='cpu', check=True" in out


def test_kernels_with_cpp_linkage_and_device_variables_on_gpu():
    # No extern "C": the GPU backend finds these by their name expressions, as the CPU does.
    import cupy
    src = r'''
    __device__ int calls;
    namespace ns { __global__ void fill(int* x, int v) { x[threadIdx.x] = v; atomicAdd(&calls, 1); } }
    template <int N> __global__ void scaled(int* x) { x[threadIdx.x] *= N; }
    __global__ void plain_cpp(int* x) { x[threadIdx.x] += 1; }'''
    for backend in ("gpu", "cpu"):
        mod = cudacheck.RawModule(src, backend=backend, name_expressions=("scaled<3>",))
        xp = cupy if backend == "gpu" else np
        x = xp.zeros(8, xp.int32)
        mod.get_function("ns::fill")(1, 8, (x, 2))
        mod.get_function("scaled<3>")(1, 8, (x,))
        mod.get_function("plain_cpp")(1, 8, (x,))
        assert (xp.asnumpy(x) if backend == "gpu" else x).tolist() == [7] * 8
        calls = np.zeros(1, np.int32)
        mod.get_global("calls").copy_to_host(ctypes.c_void_p(calls.ctypes.data), 4)
        assert calls[0] == 8


def test_shared_memory_opt_in_is_the_same_on_both_backends():
    import cupy
    src = r'''extern "C" __global__ void k(float* x) {
        extern __shared__ float d[];
        d[threadIdx.x] = 1.0f; x[threadIdx.x] = d[threadIdx.x];
    }'''
    for backend, xp in (("gpu", cupy), ("cpu", np)):
        k = cudacheck.RawKernel(src, "k", backend=backend)
        x = xp.zeros(4, xp.float32)
        with pytest.raises(cudacheck.LaunchConfigError, match="without opting in"):
            k(1, 4, (x,), shared_mem=64 * 1024)
        k.max_dynamic_shared_size_bytes = 64 * 1024
        k(1, 4, (x,), shared_mem=64 * 1024)
        assert float(x.sum()) == 4


# ---- whatever CuPy runs, the GPU backend runs -------------------------------------------

LIBRARIES = {
    "cub block reduce": ('''
        #include <cub/block/block_reduce.cuh>
        extern "C" __global__ void k(const int* in, int* out) {
            using Reduce = cub::BlockReduce<int, 128>;
            __shared__ typename Reduce::TempStorage tmp;
            int total = Reduce(tmp).Sum(in[blockIdx.x * 128 + threadIdx.x]);
            if (threadIdx.x == 0) out[blockIdx.x] = total;
        }''', lambda x: x.reshape(-1, 128).sum(1)),
    "curand philox": ('''
        #include <curand_kernel.h>
        extern "C" __global__ void k(const int* in, int* out) {
            curandStatePhilox4_32_10_t s;
            curand_init(1234, blockIdx.x * 128 + threadIdx.x, 0, &s);
            float u = curand_uniform(&s);
            atomicAdd(out + blockIdx.x, (u > 0.0f && u <= 1.0f) ? in[blockIdx.x * 128 + threadIdx.x] : 1000000);
        }''', lambda x: x.reshape(-1, 128).sum(1)),
    "libcu++ atomic_ref": ('''
        #include <cuda/atomic>
        extern "C" __global__ void k(const int* in, int* out) {
            cuda::atomic_ref<int, cuda::thread_scope_device> a(out[blockIdx.x]);
            a.fetch_add(in[blockIdx.x * 128 + threadIdx.x], cuda::std::memory_order_relaxed);
        }''', lambda x: x.reshape(-1, 128).sum(1)),
    "libcu++ barrier": ('''
        #include <cuda/barrier>
        extern "C" __global__ void k(const int* in, int* out) {
            __shared__ cuda::barrier<cuda::thread_scope_block> bar;
            __shared__ int s[128];
            if (threadIdx.x == 0) init(&bar, blockDim.x);
            __syncthreads();
            s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
            bar.arrive_and_wait();
            if (threadIdx.x == 0) { int t = 0; for (int i = 0; i < 128; ++i) t += s[i]; out[blockIdx.x] = t; }
        }''', lambda x: x.reshape(-1, 128).sum(1)),
    "grid group rank": ('''
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        extern "C" __global__ void k(const int* in, int* out) {
            cg::grid_group g = cg::this_grid();
            atomicAdd(out + g.thread_rank() / 128, in[g.thread_rank()]);
        }''', lambda x: x.reshape(-1, 128).sum(1)),
}


@pytest.mark.parametrize("name", list(LIBRARIES))
def test_gpu_backend_runs_what_cupy_runs(name):
    """CUB, cuRAND, libcu++ and grid groups: the CPU runtime's front end cannot read these
    headers, and the GPU backend compiles and runs them anyway, as cupy.RawModule does."""
    import cupy
    src, want = LIBRARIES[name]
    x = np.random.default_rng().integers(-100, 100, 4 * 128).astype(np.int32)
    out = cupy.zeros(4, cupy.int32)
    cudacheck.RawKernel(textwrap.dedent(src), "k", backend="gpu")(4, 128, (cupy.asarray(x), out))
    assert cupy.asnumpy(out).tolist() == want(x).tolist()


def test_gpu_backend_templates_and_structs_by_value():
    import cupy
    src = textwrap.dedent('''
        #include <cuda/std/type_traits>
        struct Params { float scale; int offset; double bias; };
        template <class T, int N> __global__ void fill(T* out, Params p) {
            static_assert(cuda::std::is_arithmetic<T>::value, "numbers only");
            out[threadIdx.x] = T(threadIdx.x * p.scale + p.offset + N);
        }''')
    mod = cudacheck.RawModule(src, name_expressions=("fill<float, 3>",), backend="gpu")
    k = mod.get_function("fill<float, 3>")
    p = np.zeros((), np.dtype({"names": ["scale", "offset", "bias"], "formats": ["<f4", "<i4", "<f8"],
                               "offsets": [0, 4, 8], "itemsize": 16}))[()]
    p["scale"], p["offset"] = 2.0, 5
    out = cupy.zeros(32, cupy.float32)
    k(1, 32, (out, p))
    assert cupy.asnumpy(out).tolist() == [2.0 * i + 8 for i in range(32)]


def test_gpu_backend_grid_sync_with_a_cooperative_launch():
    """CuPy's enable_cooperative_groups: a grid-wide barrier between two phases."""
    import cupy
    src = textwrap.dedent('''
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        extern "C" __global__ void k(const int* in, int* partial, int* out) {
            cg::grid_group g = cg::this_grid();
            if (threadIdx.x == 0) {
                int t = 0;
                for (int i = 0; i < 128; ++i) t += in[blockIdx.x * 128 + i];
                partial[blockIdx.x] = t;
            }
            g.sync();
            if (g.thread_rank() == 0) { int t = 0; for (int b = 0; b < gridDim.x; ++b) t += partial[b]; out[0] = t; }
        }''')
    x = np.random.default_rng().integers(-100, 100, 8 * 128).astype(np.int32)
    partial, out = cupy.zeros(8, cupy.int32), cupy.zeros(1, cupy.int32)
    mod = cudacheck.RawModule(src, backend="gpu", enable_cooperative_groups=True)
    mod.get_function("k")(8, 128, (cupy.asarray(x), partial, out))
    assert int(out[0]) == int(x.sum())


SPIN = r'''
extern "C" __global__ void spin(long long cycles, int* done) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    done[0] = 1;
}
'''


def test_a_gpu_launch_is_asynchronous_as_cupys_and_sync_waits():
    """The launch returns while the kernel runs (the kernel spins for about 0.2 s); the next
    synchronisation waits for it; sync=True waits at the launch."""
    import time

    import cupy
    k = cudacheck.RawKernel(SPIN, "spin", backend="gpu")
    done = cupy.zeros(1, cupy.int32)
    k(1, 1, (10, done), sync=True)   # compiled and warmed
    cycles = int(cupy.cuda.Device().attributes["ClockRate"] * 1e3 * 0.2)
    done[...] = 0
    start = time.perf_counter()
    k(1, 1, (cycles, done))
    queued = time.perf_counter() - start
    cudacheck.synchronize()
    waited = time.perf_counter() - start
    assert queued < 0.05 < 0.15 < waited and int(done[0]) == 1
    done[...] = 0
    start = time.perf_counter()
    k(1, 1, (cycles, done), sync=True)
    assert time.perf_counter() - start > 0.15 and int(done[0]) == 1


def test_the_cached_checks_still_refuse_what_the_first_check_refuses():
    """After a launch has cached the checks of its argument types, a wrong array, a view that
    is not contiguous, an integer out of the parameter's range and a wrong block are refused
    as at the first launch."""
    import cupy
    src = 'extern "C" __global__ void f(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = n; }'
    k = cudacheck.RawKernel(src, "f", backend="gpu")
    x = cupy.zeros((4, 32), cupy.float32)
    for _ in range(3):
        k(1, 32, (x[0], 32))
    with pytest.raises(cudacheck.ArgumentError, match="float64"):
        k(1, 32, (cupy.zeros(32, cupy.float64), 32))
    with pytest.raises(cudacheck.ArgumentError, match="C-contiguous"):
        k(1, 32, (x[:, 0], 32))
    with pytest.raises(cudacheck.ArgumentError, match="does not fit"):
        k(1, 32, (x[0], 1 << 40))
    with pytest.raises(cudacheck.LaunchConfigError):
        k(1, 2048, (x[0], 32))
    cudacheck.synchronize()
    assert float(x[0, 5]) == 32


ILLEGAL_ASYNC = r'''
import cudacheck, cupy
k = cudacheck.RawKernel('extern "C" __global__ void wild(float* p) { p[threadIdx.x + (1L << 36)] = 1.0f; }', "wild",
                        backend="gpu")
x = cupy.zeros(32, cupy.float32)
k(1, 32, (x,))
print("QUEUED")
try:
    cudacheck.synchronize()
except cudacheck.GPUContextError as e:
    print("CAUGHT", e)
'''


def test_an_asynchronous_fault_is_named_at_the_next_synchronisation():
    proc = subprocess.run([sys.executable, "-c", ILLEGAL_ASYNC], capture_output=True, text=True, timeout=300)
    assert "QUEUED" in proc.stdout and "CAUGHT kernel `wild` failed on the GPU" in proc.stdout, \
        proc.stdout + proc.stderr
    assert "backend='cpu', check=True" in proc.stdout
