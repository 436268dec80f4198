"""Every error class provoked, its message checked; a crashing or endless kernel leaves
the test process alive and the caller's arrays untouched."""
import re
import textwrap
import time

import numpy as np
import pytest

import cudacheck
from cudacheck.frontend import INCLUDE_DIR, SRC_DIR

COPY = r'''
extern "C" __global__ void copy(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
'''


@pytest.fixture(scope="module")
def copy_kernel():
    return cudacheck.RawKernel(COPY, "copy", backend="cpu")


def test_compile_error_shows_the_numbered_source_lines():
    code = textwrap.dedent('''\
        extern "C" __global__ void broken(float* x) {
            int i = threadIdx.x;
            x[i] = undefined_name * 2.0f;
        }''')
    k = cudacheck.RawKernel(code, "broken", backend="cpu")   # compiled at its first call, as CuPy's
    with pytest.raises(cudacheck.CompileError) as e:
        k(1, 1, (np.zeros(1, np.float32),))
    msg = str(e.value)
    assert "line 3" in msg and "undefined_name" in msg
    assert ">  3 |     x[i] = undefined_name * 2.0f;" in msg.replace("> 3 |", ">  3 |")
    assert e.value.backend == "cpu" and "error" in e.value.log


@pytest.mark.parametrize("line,construct", [
    ("asm volatile(\"pmevent 1;\");", "the inline PTX instruction `pmevent`"),   # a profiler's event: no CPU meaning
    ("float t; surf2Dread(&t, 0, 0, 0);", "surfaces (surface objects; texture objects are provided)"),
])
def test_an_unsupported_feature_refuses_its_kernel_by_name_and_only_it(line, construct):
    code = f'''extern "C" __global__ void uses_it(float* x) {{
        {line}
        x[threadIdx.x] = 1.0f;
    }}
    extern "C" __global__ void plain(float* x) {{ x[threadIdx.x] = 2.0f; }}'''
    mod = cudacheck.RawModule(code, backend="cpu")
    with pytest.raises(cudacheck.UnsupportedFeatureError,
                       match=rf"uses_it. uses {re.escape(construct)}.*\(line 2\).*backend='gpu'"):
        mod.get_function("uses_it")
    x = np.zeros(4, np.float32)
    mod.get_function("plain")(1, 4, (x,))
    assert x.tolist() == [2, 2, 2, 2]


@pytest.mark.parametrize("line,header", [("__half h = __float2half(x[0]);", "cuda_fp16.h"),
                                         ("nvcuda::wmma::fill_fragment(f, 0.0f);", "mma.h"),
                                         ("__pipeline_commit();", "cuda_pipeline.h")])
def test_a_cuda_header_the_kernel_does_not_include(line, header):
    # as NVRTC, which does not include them either; the CPU runtime provides them
    code = f'extern "C" __global__ void uses_it(float* x) {{\n    {line}\n}}'
    with pytest.raises(cudacheck.CompileError, match=rf"line 2|\(2\).*#include <{header}>") as e:
        cudacheck.RawModule(code, backend="cpu").compile()
    assert f"#include <{header}>" in str(e.value)
    assert not isinstance(e.value, cudacheck.UnsupportedFeatureError)


def test_cpu_include_holds_only_what_a_kernel_may_include():
    """The runtime's own units and headers are in cpu/src/, off a kernel's include path."""
    own = [p.name for p in INCLUDE_DIR.rglob("*") if p.name.startswith("kc_") or p.suffix in (".cpp", ".def", ".ld")]
    assert not own
    assert (SRC_DIR / "kc_runtime.h").is_file() and (INCLUDE_DIR / "cuda_runtime.h").is_file()


@pytest.mark.parametrize("header", sorted(p.name for p in SRC_DIR.glob("*.h")))
def test_a_kernel_cannot_include_the_runtimes_own_headers(header):
    # INCLUDE_DIR's headers reach them by their path (../src/kc_*.h), not through the include path
    code = f'#include "{header}"\n' + COPY
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=rf"does not provide \('{header}' file not found"):
        cudacheck.RawModule(code, backend="cpu").compile()


def test_unknown_compiler_option():
    with pytest.raises(cudacheck.CompileError, match="--bogus"):
        cudacheck.RawKernel(COPY, "copy", options=("--bogus",), backend="cpu").compile()


def test_unknown_kernel_name():
    with pytest.raises(KeyError, match="kernels found: copy"):
        cudacheck.RawKernel(COPY, "cpy", backend="cpu").compile()


@pytest.mark.parametrize("args,match", [
    ((np.zeros(4, np.float32),), r"takes 3 arguments, but 1 were given"),
    ((np.zeros(4, np.float64), np.zeros(4, np.float32), 4), r"argument 0 \(`const float\* src`\).*float64.*astype"),
    ((1.0, np.zeros(4, np.float32), 4), r"argument 0 .* is a pointer, so it needs an array"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(1)), r"argument 2 \(`int n`\) .* scalar int"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), 2.5), r"argument 2 .* is an integer, but got 2.5"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), 2**31), r"does not fit"),
    ((np.zeros(4, np.float32), np.zeros((4, 4), np.float32)[:, 0], 4), r"C-contiguous"),
    ((np.zeros(4, np.float32), [0.0] * 4, 4), r"argument 1 .* needs an array"),
])
def test_argument_errors(copy_kernel, args, match):
    with pytest.raises(cudacheck.ArgumentError, match=match):
        copy_kernel(1, 4, args)


def test_read_only_array_for_a_written_parameter(copy_kernel):
    dst = np.zeros(4, np.float32)
    dst.flags.writeable = False
    with pytest.raises(cudacheck.ArgumentError, match="read-only"):
        copy_kernel(1, 4, (np.zeros(4, np.float32), dst, 4))


@pytest.mark.parametrize("grid,block,shared,match", [
    (1, (32, 33), 0, r"1056 threads per block; the limit is 1024"),
    (1, (1, 1, 65), 0, r"blockDim.z may be at most 64"),
    (1, (2048,), 0, r"blockDim.x may be at most 1024"),
    ((0, 1), 32, 0, r"gridDim.x is 0.*round up"),
    (1, 0, 0, r"at least 1"),
    ((1, 1, 1, 1), 32, 0, r"1 to 3 ints"),
    (1, 32, 49 * 1024, r"exceeds the 49152 bytes.*max_dynamic_shared_size_bytes"),
    (1, 32, -1, r"byte count"),
    (1.5, 32, 0, r"int or a tuple"),
])
def test_launch_config_errors(copy_kernel, grid, block, shared, match):
    with pytest.raises(cudacheck.LaunchConfigError, match=match):
        copy_kernel(grid, block, (np.zeros(4, np.float32), np.zeros(4, np.float32), 4), shared_mem=shared)


def test_segfault_becomes_an_exception_and_the_process_goes_on(copy_kernel):
    wild = cudacheck.RawKernel(r'''
        extern "C" __global__ void wild(float* p) {
            if (blockIdx.x == 2 && threadIdx.x == 5) p[threadIdx.x + (1L << 40)] = 1.0f;
        }''', "wild", backend="cpu")
    out = np.arange(16, dtype=np.float32)
    with pytest.raises(cudacheck.KernelCrashError,
                       match=r"(?s)SIGSEGV.*block \(2, 0, 0\), thread \(5, 0, 0\).*check=True"):
        wild(4, 32, (out,))
    np.testing.assert_array_equal(out, np.arange(16))   # the caller's array is untouched
    dst = np.zeros(4, np.float32)
    copy_kernel(1, 4, (np.ones(4, np.float32), dst, 4))  # and launches still work
    assert dst.tolist() == [1, 1, 1, 1]


def test_stack_overflow_is_a_crash_too():
    deep = cudacheck.RawKernel(r'''
        __device__ int depth(volatile int* p, int n) {
            volatile char pad[4096]; pad[0] = n; return n ? depth(p, n - 1) + pad[0] : p[0];
        }
        extern "C" __global__ void deep(int* out) { out[0] = depth(out, 1 << 20); }''', "deep", backend="cpu")
    with pytest.raises(cudacheck.KernelCrashError,
                       match=r"overflowed the stack of block \(0, 0, 0\), thread \(0, 0, 0\)"
                             r".*cudacheck.config.stack_size"):
        deep(1, 1, (np.zeros(1, np.int32),))


def test_a_local_array_as_large_as_a_gpu_allows_runs():
    # 256 KiB of local memory per thread is legal CUDA (up to 512 KiB).
    big = cudacheck.RawKernel(r'''
        extern "C" __global__ void big(const int* in, int* out) {
            int local[65536];
            for (int i = 0; i < 65536; ++i) local[i] = in[i % 4] + i;
            out[threadIdx.x] = local[65535 - threadIdx.x];
        }''', "big", backend="cpu")
    out = np.zeros(4, np.int32)
    big(1, 4, (np.arange(4, dtype=np.int32), out))
    assert out.tolist() == [65535 + 3, 65534 + 2, 65533 + 1, 65532 + 0]


def test_endless_kernel_times_out_and_the_process_goes_on(copy_kernel):
    spin = cudacheck.RawKernel(r'''
        extern "C" __global__ void spin(int* flag) {
            for (;;) { }   // never ends
        }''', "spin", backend="cpu")
    start = time.monotonic()
    with pytest.raises(cudacheck.KernelTimeoutError, match=r"time limit of 1 s.*0 of 3 blocks.*thread \(0, 0, 0\)"):
        spin(3, 8, (np.zeros(1, np.int32),), time_limit=1.0)
    assert time.monotonic() - start < 5
    dst = np.zeros(4, np.float32)
    copy_kernel(1, 4, (np.full(4, 3, np.float32), dst, 4))
    assert dst.tolist() == [3, 3, 3, 3]


def test_the_time_limit_comes_from_config(monkeypatch):
    monkeypatch.setattr(cudacheck.config, "time_limit", 0.5)
    spin = cudacheck.RawKernel('extern "C" __global__ void s2(int* f) { for (;;) {} }', "s2", backend="cpu")
    with pytest.raises(cudacheck.KernelTimeoutError, match="0.5 s"):
        spin(1, 1, (np.zeros(1, np.int32),))


@pytest.mark.parametrize("check", [False, True])
def test_waiting_on_a_flag_nobody_sets_is_reported_long_before_the_time_limit(check):
    spin = cudacheck.RawKernel(r'''
        extern "C" __global__ void spin(volatile int* flag) {
            while (flag[0] == 0) { }   // nobody ever sets it
        }''', "spin", backend="cpu", check=check)
    start = time.monotonic()
    with pytest.raises(cudacheck.ForwardProgressError, match=r"polls flag\[0\].*which holds 0"):
        spin(3, 8, (np.zeros(1, np.int32),), time_limit=30.0)
    assert time.monotonic() - start < 10


def test_integer_division_by_zero_is_a_crash():
    div = cudacheck.RawKernel(r'''
        extern "C" __global__ void div(int* x, int d) { x[threadIdx.x] = x[threadIdx.x] / d; }''', "div", backend="cpu")
    with pytest.raises(cudacheck.KernelCrashError, match="SIGFPE"):
        div(1, 4, (np.ones(4, np.int32), 0))


def test_all_errors_derive_from_kernel_error():
    for cls in (cudacheck.CompileError, cudacheck.UnsupportedFeatureError, cudacheck.ArgumentError,
                cudacheck.LaunchConfigError, cudacheck.KernelCrashError, cudacheck.KernelTimeoutError,
                cudacheck.KernelAssertionError, cudacheck.GPUContextError):
        assert issubclass(cls, cudacheck.KernelError)
