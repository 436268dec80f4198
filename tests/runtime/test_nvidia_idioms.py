"""What NVIDIA teaches as correct runs clean in checked mode, and the buggy variant beside each is
still found (issue 45, item 3): the Programming Guide's atomicCAS loop (atomicAdd for double),
a kernel given a view into a larger allocation (the 'CUDA C Basics' stencil's in[-3]), the
simpleTemplates sample's generic SharedMemory<T> that calls an undefined error() no instance
reaches, and many threads storing one value to a flag (Rodinia's bfs), which is a warning."""
import warnings

import numpy as np
import pytest

import cudacheck

SOURCE = r'''
// The CUDA C++ Programming Guide's atomicAdd for double, built of atomicCAS: the first read is
// plain, and the CAS checks whatever it read.
__device__ double guide_atomic_add(double* address, double val) {
    unsigned long long int* address_as_ull = (unsigned long long int*)address;
    unsigned long long int old = *address_as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}
extern "C" __global__ void sum_cas(const double* in, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) guide_atomic_add(out, in[i]);
}
// The same read-modify-write with a plain store: updates are lost on a GPU.
extern "C" __global__ void sum_plain(const double* in, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { double old = *out; *out = old + in[i]; }
}

// NVIDIA's 'CUDA C Basics' 1-D stencil: launched with in = d_in + RADIUS, it reads in[-RADIUS].
#define RADIUS 3
#define BLOCK_SIZE 32
extern "C" __global__ void stencil_1d(const int* in, int* out) {
    __shared__ int temp[BLOCK_SIZE + 2 * RADIUS];
    int gindex = threadIdx.x + blockIdx.x * blockDim.x;
    int lindex = threadIdx.x + RADIUS;
    temp[lindex] = in[gindex];
    if (threadIdx.x < RADIUS) {
        temp[lindex - RADIUS] = in[gindex - RADIUS];
        temp[lindex + BLOCK_SIZE] = in[gindex + BLOCK_SIZE];
    }
    __syncthreads();
    int result = 0;
    for (int offset = -RADIUS; offset <= RADIUS; offset++) result += temp[lindex + offset];
    out[gindex] = result;
}
// A shift within one allocation through two views: thread i writes x[i - 1] of the later view.
extern "C" __global__ void shift_back(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i - 1] = x[i];
}

// Rodinia's bfs sets its flag from every thread that finds work: one value, many writers.
extern "C" __global__ void set_flag(const int* work, bool* over, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && work[i] > 0) *over = true;
}
// The same with each thread's own value: a race.
extern "C" __global__ void set_last(const int* work, int* last, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && work[i] > 0) *last = work[i];
}
'''

# NVIDIA's simpleTemplates sample: the generic SharedMemory<T> calls error(), declared and never
# defined, so that only its specialisations can be used; nvcc builds it, instantiating those.
TEMPLATES = r'''
template <class T> struct SharedMemory {
    __device__ T* getPointer() {
        extern __device__ void error(void);
        error();
        return NULL;
    }
};
template <> struct SharedMemory<int> {
    __device__ int* getPointer() { extern __shared__ int s_int[]; return s_int; }
};
template <> struct SharedMemory<float> {
    __device__ float* getPointer() { extern __shared__ float s_float[]; return s_float; }
};
template <class T> __global__ void testKernel(T* g_idata, T* g_odata) {
    SharedMemory<T> smem;
    T* sdata = smem.getPointer();
    const unsigned int tid = threadIdx.x;
    sdata[tid] = g_idata[tid];
    __syncthreads();
    sdata[tid] = (T)blockDim.x * sdata[tid];
    __syncthreads();
    g_odata[tid] = sdata[tid];
}
'''


def kernel(name, check=True):
    return cudacheck.RawModule(code=SOURCE, backend="cpu", check=check).get_function(name)


@pytest.mark.parametrize("blocks,threads", [(1, 1), (3, 64), (7, 96)])
def test_the_guides_cas_loop_is_clean_and_a_plain_update_is_a_race(rng, workers, blocks, threads):
    n = blocks * threads - int(rng.integers(0, threads))
    x = rng.standard_normal(n)
    out = np.zeros(1)
    kernel("sum_cas")((blocks,), (threads,), (x, out, n))
    assert abs(out[0] - x.sum()) <= 1e-12 * n * np.abs(x).max()   # float64 sums, in another order
    if n > 1:
        with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
            kernel("sum_plain")((blocks,), (threads,), (x, np.zeros(1), n))
        assert e.value.array == "out" and e.value.index == (0,)


def test_a_view_may_read_its_allocation_before_its_start_as_on_a_gpu(rng, workers):
    n = 32 * int(rng.integers(1, 5))
    full = rng.integers(-1000, 1000, n + 2 * 3).astype(np.int32)   # RADIUS elements of halo on each side
    expected = np.convolve(full.astype(np.int64), np.ones(7, np.int64), "valid")
    for check in (False, True):
        out = np.zeros(n, np.int32)
        kernel("stencil_1d", check)((n // 32,), (32,), (full[3:3 + n], out))
        np.testing.assert_array_equal(out, expected)


def test_a_view_reading_before_its_allocation_is_out_of_bounds(rng):
    n = 32 * int(rng.integers(1, 4))
    full = rng.integers(-1000, 1000, n + 2 * 3).astype(np.int32)
    with pytest.raises(cudacheck.OutOfBoundsError) as e:   # starts 2 elements in: in[-3] is outside
        kernel("stencil_1d")((n // 32,), (32,), (full[2:2 + n], np.zeros(n, np.int32)))
    err = e.value
    assert err.array == "in" and err.index == (-3,) and err.thread == (0, 0, 0) and err.block == (0, 0, 0)
    assert "outside the allocation in is a view into (2 elements before in[0]" in str(err)
    with pytest.raises(cudacheck.OutOfBoundsError) as e:   # no halo after it: in[n + 2] is past its end
        kernel("stencil_1d")((n // 32,), (32,), (full[5:], np.zeros(n, np.int32)))
    assert e.value.index == (n + 1,) and e.value.thread == (1, 0, 0) and e.value.block == (n // 32 - 1, 0, 0)


def test_views_of_one_allocation_race_through_the_memory_before_them(rng, workers):
    x = rng.integers(0, 100, 200).astype(np.int32)
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        kernel("shift_back")((2,), (64,), (x[40:], 128))
    assert e.value.array == "x" and e.value.hazard == "read-write"


def test_an_uninstantiated_template_may_call_an_undefined_function(rng):
    for check in (False, True):
        mod = cudacheck.RawModule(code=TEMPLATES, backend="cpu", check=check,
                                  name_expressions=("testKernel<float>", "testKernel<int>"))
        threads = int(rng.integers(1, 129))
        x = rng.standard_normal(threads).astype(np.float32)
        out = np.zeros_like(x)
        mod.get_function("testKernel<float>")((1,), (threads,), (x, out), shared_mem=4 * threads)
        np.testing.assert_array_equal(out, np.float32(threads) * x)
        k = rng.integers(-1000, 1000, threads).astype(np.int32)
        mod.get_function("testKernel<int>")((1,), (threads,), (k, np.zeros_like(k)), shared_mem=4 * threads)


def test_an_instance_that_calls_the_undefined_function_is_refused():
    mod = cudacheck.RawModule(code=TEMPLATES, backend="cpu", name_expressions=("testKernel<double>",))
    with pytest.raises(cudacheck.CompileError, match=r"device code calls `error\(\)`.*testKernel<double>"):
        mod.get_function("testKernel<double>")((1,), (8,), (np.zeros(8), np.zeros(8)), shared_mem=64)


def test_threads_storing_one_value_to_a_flag_are_a_warning(rng, workers):
    n = int(rng.integers(200, 700))
    work = rng.integers(-3, 4, n).astype(np.int32)
    work[int(rng.integers(0, n))] = 1   # at least two writers
    work[int(rng.integers(0, n))] = 2
    over = np.zeros(1, np.bool_)
    with pytest.warns(cudacheck.SameValueWriteWarning, match="harmless") as w:
        kernel("set_flag")((-(-n // 64),), (64,), (work, over, n))
    assert over[0] and len(w) == 1
    note = w[0].message
    assert note.array == "over" and note.index == (0,) and (note.thread, note.block) != (note.other_thread,
                                                                                        note.other_block)
    assert not issubclass(cudacheck.SameValueWriteWarning, cudacheck.KernelError)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a plain run warns of nothing
        kernel("set_flag", check=False)((-(-n // 64),), (64,), (work, np.zeros(1, np.bool_), n))


def test_threads_storing_different_values_race():
    work = np.arange(1, 129, dtype=np.int32)
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        kernel("set_last")((2,), (64,), (work, np.zeros(1, np.int32), 128))
    assert e.value.hazard == "write-write" and "wrote different values" in str(e.value)


FLAG_PROGRAM = r'''
#include <cstdio>
__global__ void search(const int* work, bool* over, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && work[i] > 0) *over = true;
}
int main() {
    const int n = 500;
    static int h[n];
    for (int i = 0; i < n; ++i) h[i] = (i * 7919) % 5 - 2;
    int* work;
    bool* over;
    bool found = false;
    cudaMalloc(&work, n * sizeof(int));
    cudaMalloc(&over, sizeof(bool));
    cudaMemcpy(work, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(over, 0, sizeof(bool));
    search<<<(n + 63) / 64, 64>>>(work, over, n);
    cudaMemcpy(&found, over, sizeof(bool), cudaMemcpyDeviceToHost);
    printf("over %d\n", found);
    cudaFree(work);
    cudaFree(over);
    return 0;
}
'''


def test_a_whole_programs_flag_of_one_value_is_a_warning_in_its_result():
    result = cudacheck.run_program(FLAG_PROGRAM, backend="cpu", check=True)
    assert "over 1" in result.stdout
    warned = [w for w in result.warnings if isinstance(w, cudacheck.SameValueWriteWarning)]
    assert len(warned) == 1 and warned[0].array == "over" and warned[0].line == 5
