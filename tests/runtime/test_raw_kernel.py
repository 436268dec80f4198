"""RawKernel is CuPy's class: its attributes, compilation at first use (a source's errors
raised there, as CuPy raises them), and the kernels RawModule.get_function returns."""
import ctypes
import gc
from pathlib import Path

import numpy as np
import pytest

import cudacheck

SCALE = r'''
extern "C" __global__ void scale(float* x, float a, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = a * s[threadIdx.x];
}
'''
BROKEN = 'extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }'
# cupy.RawKernel.attributes' keys
CUPY_ATTRIBUTES = ["max_threads_per_block", "shared_size_bytes", "const_size_bytes", "local_size_bytes", "num_regs",
                   "ptx_version", "binary_version", "cache_mode_ca", "max_dynamic_shared_size_bytes",
                   "preferred_shared_memory_carveout"]


def test_a_raw_kernel_is_a_class_with_cupys_settings_as_attributes():
    k = cudacheck.RawKernel(SCALE, "scale", ("-DUNUSED=1",), "cpu")   # options and backend by position, as CuPy's
    assert isinstance(k, cudacheck.RawKernel) and cudacheck.Function is cudacheck.RawKernel
    assert (k.code, k.name, k.__name__, k.options, k.backend) == (SCALE, "scale", "scale", ("-DUNUSED=1",), "cpu")
    assert (k.translate_cucomplex, k.enable_cooperative_groups, k.jitify, k.check) == (False, False, False, False)
    assert k.max_dynamic_shared_size_bytes is None and k.last_launch is None


def test_get_function_returns_a_raw_kernel():
    k = cudacheck.RawModule(SCALE, backend="cpu").get_function("scale")
    assert isinstance(k, cudacheck.RawKernel) and k.name == "scale" and "float* x" in repr(k)
    x = np.arange(4, dtype=np.float32)
    k(1, 4, (x, np.float32(2), np.int32(4)))
    assert x.tolist() == [0, 2, 4, 6]


def test_a_raw_kernel_compiles_at_its_first_call():
    k = cudacheck.RawKernel(BROKEN, "broken", backend="cpu")    # no error yet: nothing is compiled
    assert "compiled at its first use" in repr(k)
    for use in (lambda: k(1, 1, (np.zeros(1, np.float32),)), k.compile, lambda: k.kernel, lambda: k.attributes,
                lambda: k.num_regs, lambda: k.signature):
        with pytest.raises(cudacheck.CompileError, match="undefined_name"):
            use()


def test_a_wrong_name_is_found_at_first_use():
    k = cudacheck.RawKernel(SCALE, "scal", backend="cpu")
    with pytest.raises(KeyError, match="kernels found: scale"):
        k(1, 1, (np.zeros(1, np.float32), np.float32(1), np.int32(1)))


def test_settings_are_checked_when_the_kernel_is_made():
    with pytest.raises(TypeError, match="non-empty string"):
        cudacheck.RawKernel("", "k")
    with pytest.raises(ValueError, match="backend must be one of"):
        cudacheck.RawKernel(SCALE, "scale", backend="hip")   # CuPy's "nvrtc" and "nvcc" are taken: the GPU


def test_a_raw_module_compiles_at_its_first_use():
    """As CuPy's: making it compiles nothing; compile(), get_function or kernels does."""
    for use in (lambda m: m.compile(), lambda m: m.get_function("k"), lambda m: m.kernels):
        mod = cudacheck.RawModule(BROKEN, backend="cpu")
        with pytest.raises(cudacheck.CompileError, match="undefined_name"):
            use(mod)


def test_attributes_on_the_cpu_runtime():
    k = cudacheck.RawKernel(SCALE, "scale", backend="cpu")
    attrs = k.attributes
    assert list(attrs) == CUPY_ATTRIBUTES
    assert attrs["max_threads_per_block"] == k.max_threads_per_block == cudacheck.MAX_THREADS_PER_BLOCK
    assert attrs["shared_size_bytes"] == k.shared_size_bytes == 64 * 4
    assert attrs["max_dynamic_shared_size_bytes"] == cudacheck.DEFAULT_SHARED_LIMIT - 64 * 4
    assert k.num_regs == k.ptx_version == k.local_size_bytes == -1    # what a CPU does not have
    k.max_dynamic_shared_size_bytes = 100 * 1024
    assert k.attributes["max_dynamic_shared_size_bytes"] == 100 * 1024
    assert callable(k.kernel)


def _mapped(path):
    """Whether this process has the file at `path` mapped (a library loaded)."""
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(str(path)) for line in maps)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the process's mappings in /proc")
def test_a_modules_library_is_unloaded_when_nothing_reaches_it(rng):
    """Every launch forks, and a fork copies each mapping the process holds: a module's library
    goes with the module, but not while an array of one of its variables lives."""
    n = int(rng.integers(1, 1 << 20))   # a source of its own: no other module shares its library
    src = (f"__device__ int seen[4];\n"
           f'extern "C" __global__ void count() {{ atomicAdd(&seen[threadIdx.x % 4], {n}); }}\n')
    mod = cudacheck.RawModule(src, backend="cpu")
    mod.get_function("count")((3,), (8,), ())
    path = mod.impl.path
    seen = mod.get_global("seen").array
    del mod
    gc.collect()
    assert _mapped(path), "the library went while an array of its variable was still held"
    assert seen.tolist() == [6 * n] * 4    # 24 threads, 6 a slot, each adding n
    del seen
    gc.collect()
    assert not _mapped(path), "the library stayed loaded after its module and arrays had gone"


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _heap_in_use():
    """Bytes of the C library's heap in use (glibc's mallinfo2)."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    return libc.mallinfo2().uordblks


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="reads glibc's mallinfo2")
def test_modules_made_and_dropped_leave_the_heap_as_it_was(rng):
    """A module's library, loaded and unloaded, keeps none of the heap: its static C++ library
    mallocs an emergency pool for exceptions when loaded (71 KiB), which dlclose does not free, so
    a process that made a module per test kept 150 MB by the end of the corpus and forked slower
    for it (src/kc_module.cpp). A device variable gives every module a private copy of the
    library, so each of these is a load of its own."""
    n = int(rng.integers(1, 1 << 20))
    src = (f"__device__ int seen[4];\n"
           f'extern "C" __global__ void count() {{ atomicAdd(&seen[threadIdx.x % 4], {n}); }}\n')

    def made_and_dropped():
        mod = cudacheck.RawModule(src, backend="cpu")
        mod.get_function("count")((1,), (4,), ())
        assert mod.get_global("seen").array.tolist() == [n] * 4
        del mod
        gc.collect()

    made_and_dropped()   # the first: the build, and whatever a first load sets up once
    before = _heap_in_use()
    for _ in range(12):
        made_and_dropped()
    grown = _heap_in_use() - before
    assert grown < 256 * 1024, f"12 modules made and dropped kept {grown / 1024:.0f} KiB of the heap"
