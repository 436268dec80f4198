"""The C++ front end: what both backends learn from a source (kernels, signatures,
shared and device variables), read with clang's types rather than patterns."""
import numpy as np
import pytest

import cudacheck
from cudacheck import frontend


def kernel_names(src, exprs=()):
    return cudacheck.RawModule(src, backend="cpu", name_expressions=exprs).kernels


def test_kernels_in_every_spelling():
    src = r'''
    #define BM 64
    #define BN 64
    #define TM 8
    #define TN 8
    namespace ns {
    __global__ void __launch_bounds__((BM * BN) / (TM * TN), 1) scale(float* x, float a) { x[threadIdx.x] *= a; }
    }
    template <typename T, int B = 128, bool CLAMP = false>
    __global__ void tk(const T* __restrict__ a, T* b, int n) { b[threadIdx.x] = a[threadIdx.x]; }
    extern "C" { __global__ void in_block(int) {} }
    extern "C" __global__ void plain(float* x) {}
    __global__ void cpp_linkage(double* x) {}
    __device__ float helper(float x) { return x; }
    '''
    found = kernel_names(src, ("tk<float>", "tk<double, 64, true>"))
    assert set(found) == {"ns::scale", "tk<float>", "tk<double, 64, true>", "in_block", "plain", "cpp_linkage"}
    assert found["ns::scale"].linkage == "C++" and found["plain"].linkage == "C"
    assert [p.base for p in found["tk<double, 64, true>"].params] == ["double", "double", "int"]
    assert found["tk<float>"].params[0].const and not found["tk<float>"].params[1].const


SPECIALIZED = r'''
template <typename T> __global__ void k(T* x) { x[threadIdx.x] += 1; }
template <> __global__ void k<int>(int* x) { x[threadIdx.x] += 7; }
'''


@pytest.mark.parametrize("backend,check", [("cpu", False), ("cpu", True),
                                           pytest.param("gpu", False, marks=pytest.mark.gpu)],
                         ids=["plain", "checked", "gpu"])
def test_an_explicit_specialization_runs_as_its_template_instance(backend, check):
    """`template <> __global__ void k<int>(int*)` beside its template: name expressions reach both
    the specialization and an instance of the template, as NVRTC's do on a GPU (it was read as a
    kernel `k` of its own, and the build failed on the name)."""
    xp = np if backend == "cpu" else pytest.importorskip("cupy")
    mod = cudacheck.RawModule(SPECIALIZED, backend=backend, check=check, name_expressions=("k<float>", "k<int>"))
    for name, dtype, added in (("k<float>", np.float32, 1), ("k<int>", np.int32, 7)):
        x = xp.arange(32, dtype=dtype)
        mod.get_function(name)((1,), (32,), (x,))
        np.testing.assert_array_equal(x if xp is np else xp.asnumpy(x), np.arange(32) + added)


def test_parameter_types_through_typedefs_arrays_and_structs():
    src = r'''
    typedef float real;
    typedef unsigned int uint;
    struct __align__(16) Body { float4 pos; float mass; int id; };
    enum Mode { A, B };
    extern "C" __global__ void k(real x[], const uint* h, Body* bodies, real scale, uint count, Mode m,
                                 float4* v, const unsigned char* bytes) {}
    '''
    p = {q.name: q for q in kernel_names(src)["k"].params}
    assert (p["x"].pointer, p["x"].dtype) == (True, np.float32)
    assert (p["h"].pointer, p["h"].const, p["h"].dtype) == (True, True, np.uint32)
    assert p["scale"].dtype == np.float32 and p["count"].dtype == np.uint32 and p["m"].dtype == np.uint32
    assert (p["v"].dtype, p["v"].lanes, p["v"].itemsize) == (np.float32, 4, 16)
    assert p["bytes"].dtype == np.uint8
    body = p["bodies"].dtype
    assert body.itemsize == 32 and body.fields["mass"][1] == 16 and body.fields["pos"][0].shape == (4,)


def test_a_typedefd_pointer_refuses_the_wrong_element_type():
    k = cudacheck.RawKernel('typedef unsigned int uint;\nextern "C" __global__ void k(uint* h) { h[0] = 1; }', "k",
                          backend="cpu")
    with pytest.raises(cudacheck.ArgumentError, match=r"unsigned int \(uint32\).*float64"):
        k(1, 1, (np.zeros(4, np.float64),))
    h = np.zeros(4, np.uint32)
    k(1, 1, (h,))
    assert h[0] == 1


def test_a_kernel_with_cpp_linkage_runs():
    src = 'namespace ns { __global__ void fill(int* x, int v) { x[threadIdx.x] = v; } }'
    x = np.zeros(8, np.int32)
    cudacheck.RawKernel(src, "ns::fill", backend="cpu")(1, 8, (x, 3))
    assert (x == 3).all()


def test_a_wrong_name_expression_says_what_the_source_has():
    with pytest.raises(KeyError, match=r"tk<float, 3, 4>.*kernels found: tk"):
        kernel_names("template <class T, int B> __global__ void tk(T* x) {}", ("tk<float, 3, 4>",))


@pytest.mark.parametrize("call", ["exit(1)", "abort()", "int r = rand()"])
def test_host_functions_in_device_code_are_refused_as_nvrtc_does(call):
    src = f'extern "C" __global__ void k(int* x) {{ {call}; }}'
    with pytest.raises(cudacheck.CompileError, match=r"calling a __host__ function"):
        cudacheck.RawKernel(src, "k", backend="cpu").compile()


def test_more_than_48_kib_of_static_shared_memory_is_refused():
    src = 'extern "C" __global__ void k(float* x) { __shared__ float s[128][128]; s[0][0] = 1; x[0] = s[0][0]; }'
    with pytest.raises(cudacheck.CompileError, match=r"uses too much shared data \(0x10000 bytes, 0xc000 max\)"):
        cudacheck.RawKernel(src, "k", backend="cpu").compile()


def test_static_plus_dynamic_shared_memory_needs_the_opt_in():
    src = r'''extern "C" __global__ void k(float* x) {
        __shared__ float s[10240];
        extern __shared__ float d[];
        s[threadIdx.x] = 1; d[threadIdx.x] = 2; x[threadIdx.x] = s[threadIdx.x] + d[threadIdx.x];
    }'''
    k = cudacheck.RawKernel(src, "k", backend="cpu")
    x = np.zeros(4, np.float32)
    with pytest.raises(cudacheck.LaunchConfigError, match="without opting in"):
        k(1, 4, (x,), shared_mem=16 * 1024)            # 40 KiB static + 16 KiB dynamic
    k.max_dynamic_shared_size_bytes = 16 * 1024       # as in CuPy
    k(1, 4, (x,), shared_mem=16 * 1024)
    assert (x == 3).all()


def test_template_shared_sizes_are_checked_at_launch():
    src = 'template <int N> __global__ void k(float* x) { __shared__ float s[N]; s[0] = 1; x[0] = s[0]; }'
    mod = cudacheck.RawModule(src, backend="cpu", name_expressions=("k<1024>", "k<16384>"))
    mod.get_function("k<1024>")(1, 1, (np.zeros(1, np.float32),))
    with pytest.raises(cudacheck.LaunchConfigError, match="65536 bytes of static shared memory"):
        mod.get_function("k<16384>")(1, 1, (np.zeros(1, np.float32),))


def test_a_cached_source_is_not_parsed_again(monkeypatch):
    src = 'extern "C" __global__ void cached_once(float* x) { x[0] = 1; }'
    frontend.analyze(src)

    def no_parse(*a, **k):
        raise AssertionError("parsed again")
    monkeypatch.setattr(frontend.Reader, "read", no_parse)
    assert "cached_once" in frontend.analyze(src).kernels


def test_a_deleted_cache_folder_leaves_the_front_end_working(monkeypatch, tmp_path):
    """A cache folder used and deleted (a benchmark's or a test's empty cache) does not
    break the next parse in another: clang's precompiled header is remembered per folder."""
    import shutil
    for n, folder in enumerate((tmp_path / "gone", tmp_path / "next")):
        monkeypatch.setattr(cudacheck.config, "cache_dir", folder)
        src = f'extern "C" __global__ void k{n}(float* x) {{ x[0] = {n}; }}'
        assert f"k{n}" in frontend.analyze(src).kernels
        if n == 0:
            shutil.rmtree(folder)


# Members of std however a kernel names them: NVRTC (13.0, 13.5) has no C++ library and refuses
# each of these; its std holds only std::move, std::forward, std::initializer_list and
# std::align_val_t, which run, as CUDA's own min does after `using namespace std;` (STD_ACCEPTED:
# each leaves x = {2, 2, 3} from {1, 2, 3}).
STD_REFUSED = {
    'extern "C" __global__ void k(float* x) { std::swap(x[0], x[1]); }': r'namespace "std" has no member "swap"',
    'extern "C" __global__ void k(float* x) { x[0] = std::numeric_limits<float>::max(); }':
        r'namespace "std" has no member "numeric_limits"',
    'using namespace std;\nextern "C" __global__ void k(float* x) { swap(x[0], x[1]); }':
        r'kernel.cu\(2\): error: identifier "swap" is undefined',
    '#define SWAP(a, b) std::swap(a, b)\nextern "C" __global__ void k(float* x) { SWAP(x[0], x[1]); }':
        r'kernel.cu\(2\): error: namespace "std" has no member "swap"',
    'template <class T> __device__ void s(T& a, T& b) { std::swap(a, b); }\n'
    'extern "C" __global__ void k(float* x) { s(x[0], x[1]); }': r'namespace "std" has no member "swap"',
    # C++17's special functions, which a kernel's unit leaves out (cuda_cpu.h); a whole
    # program's host code has them (test_programs.py)
    'extern "C" __global__ void k(double* x) { x[0] = std::riemann_zeta(x[1]); }':
        r'namespace "std" has no member "riemann_zeta"',
}
STD_ACCEPTED = [
    'extern "C" __global__ void k(float* x) { float b = std::move(x[1]); x[0] = std::forward<float&>(b); }',
    'extern "C" __global__ void k(float* x) { std::initializer_list<float> l = {2.0f, 5.0f}; x[0] = *l.begin(); }',
    'using namespace std;\nextern "C" __global__ void k(float* x) { x[0] = min(x[1], x[2]); }',
    'template <class T> __device__ void s(T& a, T& b) { std::swap(a, b); }\n'   # never instantiated
    'extern "C" __global__ void k(float* x) { x[0] = 2; }',
    'template <class T> __device__ T m(T a) { return std::min(a, std::numeric_limits<T>::max()); }\n'
    'extern "C" __global__ void k(float* x) { x[0] = 2; }',
]


@pytest.mark.parametrize("src,match", [
    ('#include <stdint.h>\nextern "C" __global__ void k(float* x) { x[0] = 1; }',
     r"cannot open source file \"stdint.h\""),
    ('#include <cstdio>\nextern "C" __global__ void k(float* x) { printf("%f", x[0]); }',
     r"cannot open source file \"cstdio\""),
    ('extern "C" __global__ void k(float* x) { x[0] = INFINITY; }', r"INFINITY"),
    ('extern "C" __global__ void k(float* x) { x[0] = M_PI; }', r"M_PI"),
    ('extern "C" __global__ void k(float* x) { uint32_t v = 3; x[0] = v; }', r"identifier \"uint32_t\" is undefined"),
    ('extern "C" __global__ void a(float* x) { extern __shared__ float t[]; x[0] = t[0]; }\n'
     'extern "C" __global__ void b(int* x) { extern __shared__ int t[]; x[0] = t[0]; }',
     r"declaration is incompatible with previous \"t\""),
    ('#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n'
     'extern "C" __global__ void k(float* x) { auto t = cg::tiled_partition<32>(cg::this_thread_block()); '
     'x[0] = cg::reduce(t, x[0], cg::plus<float>()); }', r"reduce"),
    ('extern "C" __global__ void k(float* x) { x[0] = std::exp2(x[1]); }', r'namespace "std" has no member "exp2"'),
    ('extern "C" __global__ void k(double* x) {\n  x[0] = std::min(x[1], x[2]);\n}',
     r'kernel.cu\(2\): error: namespace "std" has no member "min"'),
    ('extern "C" __global__ void k(float* x) { float s, c; sincosf(x[0], &s, &c); x[0] = std::sin(s) + c; }',
     r'namespace "std" has no member "sin"'),
    *STD_REFUSED.items(),
])
def test_what_nvrtc_refuses_the_cpu_runtime_refuses(src, match):
    # Each of these was refused by NVRTC on an H100 (logs/2026-11-23-h100-nvrtc-probe.log); the
    # std:: ones by NVRTC 13.5 here (logs/2026-12-07-std-names.md) and on an H100 (the GPU test below).
    with pytest.raises(cudacheck.CompileError, match=match):
        cudacheck.RawModule(src, backend="cpu").compile()


@pytest.mark.parametrize("src", STD_ACCEPTED)
def test_the_std_that_nvrtc_has_runs(src):
    x = np.array([1, 2, 3], np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (x,))
    assert x.tolist() == [2, 2, 3]


@pytest.mark.gpu
def test_nvrtc_refuses_and_accepts_the_same_std():
    """Through CuPy's NVRTC on a GPU: the same sources refused, and the same ones run."""
    import cupy
    for src in STD_REFUSED:
        with pytest.raises(cudacheck.CompileError):
            cudacheck.RawModule(src, backend="gpu").get_function("k")
    for src in STD_ACCEPTED:
        x = cupy.asarray(np.array([1, 2, 3], np.float32))
        cudacheck.RawKernel(src, "k", backend="gpu")((1,), (1,), (x,))
        assert cupy.asnumpy(x).tolist() == [2, 2, 3]


def test_cuda_s_own_overloads_are_not_std_s():
    """exp2 and ::min of a float, which NVRTC has, run; `std::exp2` in a comment is no call."""
    src = 'extern "C" __global__ void k(float* x) { x[0] = exp2(x[1]) + ::min(x[2], 1.0f); }   // not std::exp2'
    x = np.array([0, 3, 0.5], np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (x,))
    assert x[0] == 8.5


def test_what_nvrtc_offers_the_cpu_runtime_offers():
    src = r'''#include <cuda_runtime.h>
    #include <math_constants.h>
    #include <cooperative_groups.h>
    #include <cooperative_groups/reduce.h>
    namespace cg = cooperative_groups;
    extern "C" __global__ void k(float* x, size_t n) {
        auto t = cg::tiled_partition<32>(cg::this_thread_block());
        float v = cg::reduce(t, x[threadIdx.x], cg::plus<float>());
        t.sync();   // a reduce orders no memory: every lane's read of x before lane 0 overwrites it
        if (threadIdx.x == 0) { x[0] = v; x[1] = CUDART_INF_F; x[2] = isinf(x[1]) ? CUDART_PI_F : 0.0f; }
    }'''
    x = np.arange(32, dtype=np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 32, (x, 32))
    assert x[0] == 496 and np.isinf(x[1]) and x[2] == np.float32(np.pi)
