"""Nothing in a kernel's source changes how it is built or checked, and device code reaches
nothing but the runtime (cpu/preprocessed.py, cpu/device_symbols.py).

Each spelling of an attribute or pragma that g++ would honour (switching checked mode's
instrumentation off, changing the arithmetic, running code when the library loads) is
ignored, as NVRTC ignores host-compiler attributes on device code: the racy kernel is still
a race, the out-of-bounds one still out of bounds, and a plain run computes the same bits.
Each way to reach the C library from device code is refused at build time, whatever its
spelling; a whole program's host code keeps its C library."""
import subprocess

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import compiler, device_symbols

RACY = r'''
%(before)s
extern "C" __global__ %(attr)s void k(float* x, int n) {
    __shared__ float s[64];
    s[0] = threadIdx.x;            // every thread writes s[0]: a race
    __syncthreads();
    if (threadIdx.x < n) x[threadIdx.x] = s[0];
}
'''
OUT_OF_BOUNDS = r'''
%(before)s
extern "C" __global__ %(attr)s void k(float* x, int n) {
    x[threadIdx.x + 1] = 1.0f;     // thread n-1 writes x[n]
}
'''
# (source before the kernel, attribute on it): every one is ignored.
SPELLINGS = {
    "no_sanitize_thread": ("", "__attribute__((no_sanitize_thread))"),
    "__no_sanitize_thread__": ("", "__attribute__((__no_sanitize_thread__))"),
    "no_sanitize(thread)": ("", '__attribute__((no_sanitize("thread")))'),
    "no_sanitize(bounds,thread)": ("", '__attribute__((noinline, no_sanitize("bounds", "thread")))'),
    "no_sanitize_address": ("", "__attribute((no_sanitize_address, no_sanitize_undefined))"),
    "disable_sanitizer_instrumentation": ("", "__attribute__((disable_sanitizer_instrumentation))"),
    "[[gnu::]]": ("", "[[gnu::no_sanitize_thread]]"),
    "[[__gnu__::]]": ("", '[[__gnu__::no_sanitize("thread", "bounds")]]'),
    "[[using gnu:]]": ("", "[[using gnu: no_sanitize_thread, always_inline]]"),
    "digraphs": ("", "<:<:gnu::no_sanitize_thread:>:>"),
    "macro": ("#define NOCHECK __attribute__((no_sanitize_thread, no_sanitize(\"bounds\")))", "NOCHECK"),
    "token pasting": ("#define A(x) __attri##x\n#define NO A(bute__)((no_sanitize_thread, no_sanitize(\"bounds\")))",
                      "NO"),
    "optimize": ("", '__attribute__((optimize("O0")))'),
    "target": ("", '__attribute__((target("arch=x86-64")))'),
    "#pragma GCC optimize": ('#pragma GCC push_options\n#pragma GCC optimize("O0")', ""),
    "_Pragma": ('#define P _Pragma("GCC optimize(\\"O0\\")")\nP', ""),
    "#line": ('#line 1 "<launch stubs>"', ""),
    "line marker": ('# 1 "cuda_cpu.h" 1', ""),
    "%:line": ('%:line 900 "elsewhere.h"', ""),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_attribute_or_pragma_cannot_switch_the_race_check_off(spelling):
    before, attr = SPELLINGS[spelling]
    k = cudacheck.RawKernel(RACY % {"before": before, "attr": attr}, "k", backend="cpu", check=True)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match=r"s\[0\]") as e:
        k((1,), (32,), (np.zeros(32, np.float32), 32))
    line = (RACY % {"before": before, "attr": attr}).splitlines().index("    s[0] = threadIdx.x;            // every "
                                                                       "thread writes s[0]: a race") + 1
    assert f"line {line}" in str(e.value)   # the source's own line, whatever a #line said


@pytest.mark.parametrize("spelling", ["no_sanitize(bounds,thread)", "__no_sanitize_thread__", "[[__gnu__::]]",
                                      "token pasting", "#line", "line marker"])
def test_an_attribute_or_pragma_cannot_switch_the_bounds_check_off(spelling):
    before, attr = SPELLINGS[spelling]
    k = cudacheck.RawKernel(OUT_OF_BOUNDS % {"before": before, "attr": attr}, "k", backend="cpu", check=True)
    with pytest.raises(cudacheck.OutOfBoundsError, match=r"x\[8\]"):
        k((1,), (8,), (np.zeros(8, np.float32), 8))


ARITHMETIC = r'''
%(before)s
extern "C" __global__ %(attr)s void k(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * b[i] + a[i] / b[i] - sqrtf(fabsf(a[i])) * 1e-3f + (a[i] + b[i]) - b[i];
}
'''


@pytest.mark.parametrize("before,attr", [
    ("", '__attribute__((optimize("fast-math")))'),
    ("", '__attribute__((optimize("Ofast", "fp-contract=off")))'),
    ('#pragma GCC optimize("fast-math", "no-fp-contract")', ""),
    ("#pragma STDC FP_CONTRACT OFF", ""),
    ("", '[[gnu::optimize("reciprocal-math", "associative-math")]]'),
], ids=["optimize fast-math", "Ofast", "pragma fast-math", "STDC FP_CONTRACT", "[[gnu::optimize]]"])
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_an_attribute_or_pragma_cannot_change_the_arithmetic(before, attr, check, rng):
    n = 1000
    a = rng.standard_normal(n).astype(np.float32)
    b = (rng.standard_normal(n) + 3).astype(np.float32)
    want = np.zeros(n, np.float32)
    cudacheck.RawKernel(ARITHMETIC % {"before": "", "attr": ""}, "k", backend="cpu", check=check)(
        (4,), (256,), (a, b, want, n))
    got = np.zeros(n, np.float32)
    cudacheck.RawKernel(ARITHMETIC % {"before": before, "attr": attr}, "k", backend="cpu", check=check)(
        (4,), (256,), (a, b, got, n))
    assert got.tobytes() == want.tobytes()
    assert np.allclose(want, a * b + a / b - np.sqrt(np.abs(a)) * 1e-3 + (a + b) - b, rtol=1e-5, atol=1e-5)


LOAD_TIME = r'''
__device__ int ran = 0;
%s
extern "C" __global__ void k(int* out) { out[0] = ran; }
'''


@pytest.mark.parametrize("code", [
    "__attribute__((constructor)) void init() { ran = 1; }",
    "[[gnu::constructor]] static void init() { ran = 1; }",
    "static void init() { ran = 1; }\n__attribute__((section(\".init_array\"), used)) static void (*p)() = init;",
    "__attribute__((destructor, constructor(101))) void init() { ran = 1; }",
], ids=["constructor", "[[gnu::constructor]]", ".init_array", "constructor(101)"])
def test_nothing_in_the_source_runs_when_the_library_loads(code):
    mod = cudacheck.RawModule(code=LOAD_TIME % code, backend="cpu")
    out = np.full(1, -1, np.int32)
    mod.get_function("k")((1,), (1,), (out,))
    assert out[0] == 0 and mod.get_global("ran").array[0] == 0


def test_an_attribute_a_gpu_honours_keeps_its_meaning():
    """Alignment, packing and inlining stay: dropping them would change layout or lines."""
    src = r'''
    struct __align__(16) Quad { float v[3]; };
    struct __attribute__((packed)) Packed { char c; int i; };
    __device__ __forceinline__ __attribute__((always_inline)) float twice(float x) { return 2 * x; }
    extern "C" __global__ void k(int* out) {
        __shared__ __attribute__((aligned(64))) float s[4];
        [[maybe_unused]] int unused = 0;
        out[0] = sizeof(Quad); out[1] = alignof(Quad); out[2] = sizeof(Packed);
        out[3] = int(reinterpret_cast<unsigned long long>(&s[0]) % 64); out[4] = int(twice(3.0f));
    }'''
    out = np.zeros(5, np.int32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=True)((1,), (1,), (out,))
    assert out.tolist() == [16, 16, 5, 0, 6]


def test_a_weak_or_aliased_function_is_what_its_source_says():
    """weak is dropped (one definition, as on a GPU); an alias with no body of its own is a
    function declared and never defined, which a GPU refuses too."""
    weak = r'''
    __attribute__((weak)) __device__ float f(float x) { return x + 1; }
    extern "C" __global__ void k(float* x) { x[0] = f(x[0]); }'''
    x = np.ones(1, np.float32)
    cudacheck.RawKernel(weak, "k", backend="cpu")((1,), (1,), (x,))
    assert x[0] == 2
    alias = r'''
    extern "C" __device__ float f(float x) { return x + 1; }
    extern "C" __device__ float g(float x) __attribute__((alias("f")));
    extern "C" __global__ void k(float* x) { x[0] = g(x[0]); }'''
    with pytest.raises(cudacheck.CompileError, match="`g` is declared but never defined"):
        cudacheck.RawKernel(alias, "k", backend="cpu")((1,), (1,), (x,))


# Ways to reach the operating system from device code, each spelled so that no declaration of
# the C library is in sight: the rule is on the built object's undefined symbols.
ESCAPES = {
    "__builtin_fork": ("int p = __builtin_fork(); x[0] = p;", "fork"),
    "__builtin_execl": ('__builtin_execl("/bin/sh", "sh", "-c", "true", (char*)0);', "execl"),
    "__builtin_abort": ("__builtin_abort();", "abort"),
    "__builtin_exit": ("__builtin_exit(3);", "exit"),
    "__builtin__exit": ("__builtin__exit(0);", "_exit"),
    "__builtin_execv": ('char* argv[] = {0}; __builtin_execv("/bin/sh", argv);', "execv"),
    "__builtin_strdup": ('x[0] = *__builtin_strdup("a");', "strdup"),
}


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_device_code_cannot_reach_the_c_library(escape, check):
    body, symbol = ESCAPES[escape]
    src = f'extern "C" __global__ void k(float* x) {{ if (threadIdx.x == 0) {{ {body} }} }}'
    with pytest.raises(cudacheck.CompileError, match=rf"device code calls `{symbol}` \(from `k`\), which is not a "
                                                     "CUDA device function") as e:
        cudacheck.RawKernel(src, "k", backend="cpu", check=check)((1,), (32,), (np.zeros(1, np.float32),))
    assert e.value.backend == "any"


def test_a_device_function_that_reaches_the_c_library_is_named():
    src = r'''
    template <int N> __device__ __noinline__ void helper(float* x) { x[0] = __builtin_fork() + N; }
    extern "C" __global__ void k(float* x) { helper<3>(x); }'''
    with pytest.raises(cudacheck.CompileError, match=r"`fork` \(from `void helper<3>\(float\*\)`\)"):
        cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.float32),))


def test_assembly_outside_a_function_is_refused():
    for src in ['asm(".globl kc_x\\nkc_x: ret");\nextern "C" __global__ void k(float* x) { x[0] = 1; }',
                'extern "C" int f() asm("getpid");\nextern "C" __global__ void k(float* x) { x[0] = 1; }']:
        with pytest.raises(cudacheck.UnsupportedFeatureError, match="outside a function"):
            cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.float32),))


def test_what_cuda_gives_device_code_of_the_c_library_is_allowed():
    """printf, malloc, free, memcpy, memset and the math functions are device functions in CUDA."""
    src = r'''
    extern "C" __global__ void k(float* x) {
        float* p = (float*)malloc(4 * sizeof(float));
        memset(p, 0, 4 * sizeof(float));
        p[1] = sinf(x[0]) + fmodf(x[0], 0.7f) + powf(x[0], 1.5f);
        memcpy(x, p, 2 * sizeof(float));
        if (threadIdx.x == 0) printf("done\n");
        free(p);
    }'''
    x = np.array([0.9, 5], np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=True)((1,), (1,), (x,))
    assert x[0] == 0 and abs(x[1] - (np.sin(0.9) + np.fmod(0.9, 0.7) + 0.9 ** 1.5)) < 1e-5


def test_a_whole_programs_host_code_keeps_its_c_library_and_its_kernels_do_not():
    host = r'''
    #include <cstdio>
    #include <unistd.h>
    __global__ void k(int* x) { x[0] = 7; }
    int main() {
        int* d; cudaMalloc(&d, sizeof(int));
        k<<<1, 1>>>(d);
        int h = 0; cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
        printf("%d %d\n", h, getpid() > 0);
        return 0;
    }'''
    assert cudacheck.run_program(host, backend="cpu").stdout.split() == ["7", "1"]
    device = host.replace("x[0] = 7;", "x[0] = __builtin_fork();")
    with pytest.raises(cudacheck.CompileError, match=r"device code calls `fork` \(from `k\(int\*\)`\)"):
        cudacheck.run_program(device, backend="cpu")


def test_every_undefined_symbol_of_a_device_object_is_checked(tmp_path):
    """reach() sees every symbol the object leaves undefined (as binutils' nm lists them), and
    the runtime's list allows each of a real kernel's and refuses a C library function."""
    src = tmp_path / "unit.cpp"
    src.write_text('#include "cuda_cpu.h"\n' + r'''
    extern "C" int getpid();
    extern "C" int kill(int, int) __attribute__((weak));
    extern "C" __global__ void k(float* x, unsigned long long* c) {
        __shared__ float s[32];
        s[threadIdx.x] = sinf(x[threadIdx.x]) + __builtin_popcountll(c[0]);
        __syncthreads();
        atomicAdd(c, 1ull);
        x[threadIdx.x] = s[31 - threadIdx.x] + getpid() + (kill ? 1 : 0);
    }''')
    obj = tmp_path / "unit.o"
    subprocess.run([cudacheck.config.cxx, *compiler.CXXFLAGS, *compiler.CHECKED_FLAGS, *device_symbols.SECTION_FLAGS,
                    f"-I{compiler.INCLUDE_DIR}", "-c", str(src), "-o", str(obj)], check=True)
    nm = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    listed = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    reached = device_symbols.reach(obj)
    assert set(reached) == listed
    allowed = device_symbols.allowed(cudacheck.config.cxx, tuple(str(o) for o in compiler.runtime_objects(True)))
    assert sorted(listed - allowed) == ["getpid", "kill"]
    assert {"sinf", "memcpy", "__tsan_write4", "_Z9atomicAddPyy"} & listed <= allowed
