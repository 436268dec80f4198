"""Whole CUDA C programs (cudacheck.run_program): the lecture's tiled program gives the same
output plain and checked, and right against NumPy; a corpus of host-side bugs, each an edit
of one correct program, is each reported by checked mode with its class and line; bad
programs never take the test process down. The GPU path (nvcc) runs where a GPU is."""
import re
import time

import numpy as np
import pytest

import cudacheck
from tests.support import ROOT
from tests.support.numerics import UNIT_ROUNDOFF
from tiling_course import programs

PROGRAM_TILED = programs.source()


def lcg_matrices(m, k, n, seed):
    """The inputs program_tiled.cu makes from its seed (its next_value())."""
    state, values = seed, []
    for _ in range(m * k + k * n):
        state = (state * 1103515245 + 12345) % 2**32
        values.append(np.float32(((state >> 8) & 0xFFFF) / 32768.0 - 1.0))
    values = np.array(values, dtype=np.float32)
    return values[:m * k].reshape(m, k), values[m * k:].reshape(k, n)


def without_timing(text):
    return re.sub(r"time [\d.]+ ms", "time (varies) ms", text)


@pytest.mark.parametrize("shape", [(37, 29, 53), (1, 1, 1), (64, 17, 31)])
def test_program_tiled_matches_numpy_plain_and_checked(rng, shape):
    m, k, n = shape
    seed = int(rng.integers(1, 2**31))
    plain = cudacheck.run_program(PROGRAM_TILED, backend="cpu", args=(m, k, n, seed))
    checked = cudacheck.run_program(PROGRAM_TILED, backend="cpu", check=True, args=(m, k, n, seed))
    assert plain.exit_code == checked.exit_code == 0, plain.stderr + checked.stderr
    assert without_timing(plain.stdout) == without_timing(checked.stdout)
    assert plain.stdout.count("PASSED") == 2 and "FAILED" not in plain.stdout
    assert checked.warnings == []
    assert [r.kernel for r in checked.reports] == ["matmul_tiled_bounds", "matmul_tiled_dynamic"]
    M, N = lcg_matrices(m, k, n, seed)
    ref = M.astype(np.float64) @ N.astype(np.float64)
    bound = 2 * k * UNIT_ROUNDOFF * (np.abs(M).astype(np.float64) @ np.abs(N).astype(np.float64))
    for line in plain.stdout.splitlines():
        got = re.search(r"P\[0\]\[0\] = (\S+), checksum = (\S+)", line)
        if got:
            assert abs(float(got[1]) - ref[0, 0]) <= bound[0, 0] + 1e-6
            assert abs(float(got[2]) - ref.sum()) <= bound.sum() + 1e-6 * ref.size
    assert "compute capability 9.0" in plain.stdout and "49152 bytes" in plain.stdout


def test_a_correct_program_is_not_refused():
    result = cudacheck.run_program(BASE, backend="cpu", check=True)
    assert (result.exit_code, result.stdout, result.warnings) == (0, "PASSED\n", [])


def test_host_code_has_the_special_functions_a_kernel_goes_without():
    """C++17's std::riemann_zeta in a program's host code, as nvcc's host compiler has it (a
    kernel's unit leaves the special functions out: test_frontend.py refuses them there)."""
    source = ('#include <cmath>\n#include <cstdio>\n'
              'int main() { printf("%.12f %.12f\\n", std::riemann_zeta(2.0), std::beta(2.0, 3.0)); }\n')
    result = cudacheck.run_program(source, backend="cpu")
    assert result.exit_code == 0, result.stderr
    zeta, beta = map(float, result.stdout.split())
    assert abs(zeta - np.pi ** 2 / 6) < 1e-11 and abs(beta - 1 / 12) < 1e-12


# ---- the corpus: one correct program and its host-side bugs -----------------------------

BASE = r'''#include <cstdio>
#include <cstdlib>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1000;
    size_t bytes = n * sizeof(float);
    float* h_a = (float*)malloc(bytes);
    float* h_b = (float*)malloc(bytes);
    float* h_c = (float*)malloc(bytes);
    for (int i = 0; i < n; ++i) { h_a[i] = i; h_b[i] = 2 * i; }
    float *d_a, *d_b, *d_c;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice));
    int threads = 256, blocks = (n + threads - 1) / threads;
    add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += h_c[i] != 3.0f * i;
    printf("%s\n", bad ? "FAILED" : "PASSED");
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    free(h_a); free(h_b); free(h_c);
    return 0;
}
'''
COPY_BACK = "    CHECK(cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost));\n"
LAUNCH = "    add<<<blocks, threads>>>(d_a, d_b, d_c, n);\n"
FREES = "    CHECK(cudaFree(d_a));\n    CHECK(cudaFree(d_b));\n    CHECK(cudaFree(d_c));\n"

# name: (text replaced, replacement, what checked mode reports, the text on its line)
CORPUS = {
    "missing copy back": (COPY_BACK, "", cudacheck.ResultNeverCopiedWarning, LAUNCH),
    "size in elements, not bytes": ("d_a, h_a, bytes,", "d_a, h_a, n,", cudacheck.UninitializedReadError,
                                    "c[i] = a[i] + b[i]"),
    "host reads device memory": (COPY_BACK, COPY_BACK + '    printf("%f\\n", d_c[0]);\n',
                                 cudacheck.HostDeviceAccessError, "d_c[0]"),
    "host writes device memory": ("    CHECK(cudaMemcpy(d_a,", "    d_a[0] = 1.0f;\n    CHECK(cudaMemcpy(d_a,",
                                  cudacheck.HostDeviceAccessError, "d_a[0] = 1.0f"),
    "use after free": (COPY_BACK + "    int bad", "    CHECK(cudaFree(d_c));\n" + COPY_BACK + "    int bad",
                       cudacheck.UseAfterFreeError, "h_c, d_c"),
    "double free": ("    free(h_a);", "    cudaFree(d_b);\n    free(h_a);", cudacheck.DoubleFreeError,
                    "    cudaFree(d_b);"),
    "wrong direction": ("bytes, cudaMemcpyDeviceToHost", "bytes, cudaMemcpyHostToDevice", cudacheck.DeviceMemoryError,
                        "h_c, d_c"),
    "copy past the end": ("d_b, h_b, bytes,", "d_b, h_b, bytes + 16,", cudacheck.DeviceMemoryError, "d_b, h_b"),
    "grid rounded down": ("blocks = (n + threads - 1) / threads", "blocks = n / threads",
                          cudacheck.UninitializedReadError, "h_c, d_c"),
    "too many threads, unchecked": ("int threads = 256", "int threads = 2048", cudacheck.LaunchConfigError, LAUNCH,
                                    "    CHECK(cudaGetLastError());\n"),
    "kernel out of bounds": ("if (i < n)", "if (i <= n)", cudacheck.OutOfBoundsError, "c[i] = a[i] + b[i]"),
    "never frees": (FREES, "", cudacheck.MemoryLeakWarning, "cudaMalloc(&d_a"),
}


def buggy(name):
    old, new, *_ = CORPUS[name]
    removed = CORPUS[name][4] if len(CORPUS[name]) > 4 else None
    assert old in BASE
    source = BASE.replace(old, new, 1)
    if removed:
        source = source.replace(removed, "", 1)
    return source


def line_of(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text.strip("\n") in line)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_checked_mode_names_each_host_bug_and_its_line(name):
    source, expected, marker = buggy(name), CORPUS[name][2], CORPUS[name][3]
    line = line_of(source, marker)
    if issubclass(expected, cudacheck.ProgramWarning):
        result = cudacheck.run_program(source, backend="cpu", check=True)
        found = [w for w in result.warnings if isinstance(w, expected)]
        assert found and found[0].line == line, result.warnings
        return
    with pytest.raises(expected) as e:
        cudacheck.run_program(source, backend="cpu", check=True)
    msg = str(e.value)
    assert f"line {line}" in msg, msg
    assert getattr(e.value, "line", line) == line


@pytest.mark.parametrize("name", ["host reads device memory", "host writes device memory"])
def test_a_host_dereference_of_device_memory_is_a_crash_even_unchecked(name):
    with pytest.raises(cudacheck.HostDeviceAccessError) as e:
        cudacheck.run_program(buggy(name), backend="cpu")
    assert f"line {line_of(buggy(name), CORPUS[name][3])}" in str(e.value) and "`d_" in str(e.value)


def test_plain_mode_answers_misuse_with_cuda_error_codes():
    # A launch with too many threads does not run; CHECK(cudaGetLastError()) sees it.
    result = cudacheck.run_program(BASE.replace("int threads = 256", "int threads = 2048"), backend="cpu")
    assert result.exit_code == 1 and "cudaErrorInvalidValue: invalid argument" in result.stderr
    # In checked mode too, when the program checks: the program's own handling runs.
    checked = cudacheck.run_program(BASE.replace("int threads = 256", "int threads = 2048"), backend="cpu", check=True)
    assert checked.exit_code == 1 and "cudaErrorInvalidValue" in checked.stderr
    wrong = cudacheck.run_program(buggy("wrong direction"), backend="cpu")
    assert wrong.exit_code == 1 and "cudaErrorInvalidValue" in wrong.stderr
    unchecked = cudacheck.run_program(buggy("too many threads, unchecked"), backend="cpu")
    assert unchecked.exit_code == 0 and unchecked.stdout == "FAILED\n"


def test_too_much_dynamic_shared_memory_is_invalid_value():
    source = BASE.replace(LAUNCH, "    add<<<blocks, threads, 49153>>>(d_a, d_b, d_c, n);\n")
    result = cudacheck.run_program(source, backend="cpu")
    assert result.exit_code == 1 and "cudaErrorInvalidValue" in result.stderr


def test_a_main_that_loops_forever_is_stopped():
    source = BASE.replace("    return 0;", "    while (true) {}\n    return 0;")
    start = time.monotonic()
    with pytest.raises(cudacheck.KernelTimeoutError) as e:
        cudacheck.run_program(source, backend="cpu", time_limit=2)
    assert time.monotonic() - start < 10 and "time limit of 2 s" in str(e.value)
    assert e.value.stdout == "PASSED\n"


def test_a_main_that_crashes_names_its_line():
    source = BASE.replace("    return 0;", "    volatile int* p = nullptr;\n    *p = 1;\n    return 0;")
    with pytest.raises(cudacheck.HostCrashError) as e:
        cudacheck.run_program(source, backend="cpu")
    assert "SIGSEGV" in str(e.value) and f"line {line_of(source, '*p = 1')}" in str(e.value)


def test_a_plain_kernel_reading_past_its_array_stops_naming_the_kernel(rng):
    # Past the allocation's last page (1000 floats: one page), so that the read faults.
    past = int(rng.integers(1100, 1 << 20))
    source = BASE.replace("if (i < n) c[i] = a[i] + b[i];", f"if (i < n) c[i] = a[i + n + {past}] + b[i];")
    with pytest.raises(cudacheck.KernelCrashError) as e:
        cudacheck.run_program(source, backend="cpu")
    msg = str(e.value)
    assert not isinstance(e.value, cudacheck.HostCrashError)
    assert "kernel `add` crashed with SIGSEGV" in msg and "past the end of `a`" in msg and "check=True" in msg, msg
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        cudacheck.run_program(source, backend="cpu", check=True)
    assert e.value.kernel == "add" and e.value.array == "a" and e.value.index == (1000 + past,)


def test_host_code_reading_far_past_a_malloc_stops_naming_its_line(rng):
    start = int(rng.integers(16, 4096))
    source = BASE.replace("    int bad = 0;\n", "    volatile float sink;\n"
                          f"    for (long i = {start}; ; i += 1024) sink = h_a[i];\n    int bad = 0;\n")
    with pytest.raises(cudacheck.HostCrashError) as e:
        cudacheck.run_program(source, backend="cpu")
    msg = str(e.value)
    assert "host code crashed with SIGSEGV" in msg and f"line {line_of(source, 'sink = h_a[i]')}" in msg, msg
    assert "an index past a host array's end" in msg and e.value.stdout == ""


def test_exit_codes_arguments_and_stdin_reach_the_program():
    source = r'''#include <cstdio>
    #include <cstdlib>
    int main(int argc, char** argv) {
        int x = 0;
        if (scanf("%d", &x) != 1) return 3;
        printf("%s %d\n", argv[1], x + 1);
        exit(argc == 2 ? 7 : 0);
    }'''
    result = cudacheck.run_program(source, backend="cpu", args=("hello",), stdin="41")
    assert (result.exit_code, result.stdout) == (7, "hello 42\n")


def test_a_kernel_finding_keeps_the_exception_classes_of_rawkernel():
    source = BASE.replace("if (i < n) c[i]", "c[i]")
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        cudacheck.run_program(source, backend="cpu", check=True)
    assert e.value.kernel == "add" and e.value.array in ("a", "c") and e.value.index == (1000,)


@pytest.mark.gpu(nvcc=True)
def test_program_tiled_on_the_gpu_matches_the_cpu_runtime(rng):
    seed = int(rng.integers(1, 2**31))
    gpu = cudacheck.run_program(PROGRAM_TILED, backend="gpu", args=(37, 29, 53, seed))
    cpu = cudacheck.run_program(PROGRAM_TILED, backend="cpu", args=(37, 29, 53, seed))
    assert gpu.exit_code == 0 and gpu.stdout.count("PASSED") == 2, gpu.stdout + gpu.stderr
    # What may differ: the device line, the checksum's last digits, and the max error's
    # digits (nvcc contracts a*b+c into an FMA, the CPU runtime's g++ does not; the H100
    # gave 9.5e-07 where the CPU runtime gave 1.3e-06 for the same seed). Each error
    # must still be a rounding error, far under the program's own 1e-3 threshold.
    for out in (gpu.stdout, cpu.stdout):
        errors = [float(e) for e in re.findall(r"max error (\S+)", out)]
        assert len(errors) == 2 and max(errors) < 1e-5, out
    strip = re.compile(r"^Device:.*$|^Shared memory per block.*$|P\[0\]\[0\].*$|max error \S+", re.M)
    assert strip.sub("", without_timing(gpu.stdout)) == strip.sub("", without_timing(cpu.stdout))


@pytest.mark.gpu(nvcc=True)
def test_the_gpu_reports_a_bad_launch_as_the_cpu_runtime_does():
    source = BASE.replace("int threads = 256", "int threads = 2048")
    gpu = cudacheck.run_program(source, backend="gpu")
    cpu = cudacheck.run_program(source, backend="cpu")
    assert (gpu.exit_code, gpu.stderr) == (cpu.exit_code, cpu.stderr)


LAUNCH_PROBE = (ROOT / "tests" / "runtime" / "launch_probe.cu").read_text()
# What an H100 with CUDA 13.0 printed for tests/runtime/launch_probe.cu (logs/2026-11-23-h100-programs.md):
# every bad grid, block or shared-memory size leaves cudaErrorInvalidValue, and so does a block over
# the kernel's __launch_bounds__ (H100, CUDA 13, 2026-12-06).
PROBE_ON_H100 = {"block (1024, 1, 1)": "cudaSuccess", "dynamic shared 49152": "cudaSuccess", "last:": "cudaSuccess",
                 "launch bounds 128, block 128": "cudaSuccess"}


def test_every_bad_launch_leaves_the_code_a_gpu_leaves():
    lines = cudacheck.run_program(LAUNCH_PROBE, backend="cpu").stdout.splitlines()
    assert len(lines) == 17
    for line in lines:
        label, code = line.rsplit(" ", 1)
        assert code == PROBE_ON_H100.get(label.strip(), "cudaErrorInvalidValue"), line


@pytest.mark.gpu(nvcc=True)
def test_the_launch_probe_prints_the_same_on_the_gpu():
    gpu = cudacheck.run_program(LAUNCH_PROBE, backend="gpu")
    assert gpu.stdout == cudacheck.run_program(LAUNCH_PROBE, backend="cpu").stdout


@pytest.mark.gpu(nvcc=True)
def test_a_compile_error_from_nvcc_shows_the_line():
    source = BASE.replace("int bad = 0;", "int bad = undefined_name;")
    with pytest.raises(cudacheck.CompileError) as e:
        cudacheck.run_program(source, backend="gpu")
    assert f"line {line_of(source, 'undefined_name')}:" in str(e.value)


def test_the_cuda_program_magic_prints_output_and_errors_as_lessons(capsys):
    from tiling_course.magic import cuda_program
    cuda_program("--cpu --check", BASE.replace(FREES, ""))
    out = capsys.readouterr().out
    assert out.startswith("PASSED\n") and out.count("MemoryLeakWarning (line") == 3
    cuda_program("--cpu --check", buggy("use after free"))
    out = capsys.readouterr().out
    assert "UseAfterFreeError: cudaMemcpy(cudaMemcpyDeviceToHost) at line" in out and "Traceback" not in out
    with_args = BASE.replace("return 0;", "return argc;").replace("int main()", "int main(int argc, char** argv)")
    cuda_program("--cpu 5", with_args)
    assert capsys.readouterr().out == "PASSED\n(the program exited with code 2)\n"


def test_template_kernels_dim3_streams_and_the_opt_in_launch():
    source = r'''#include <cstdio>
    namespace ops {
    template <int SCALE, class T> __global__ void scale(T* x, int n) {
        extern __shared__ float staging[];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        staging[threadIdx.x] = i < n ? float(x[i]) : 0.0f;
        __syncthreads();
        if (i < n) x[i] = T(staging[threadIdx.x] * SCALE);
    }
    }
    int main() {
        const int n = 300;
        float h[n];
        for (int i = 0; i < n; ++i) h[i] = 0.5f * i;
        float* d;
        cudaMalloc(&d, sizeof h);
        cudaMemcpy(d, h, sizeof h, cudaMemcpyDefault);
        cudaStream_t s;
        cudaStreamCreate(&s);
        dim3 block(128), grid((n + block.x - 1) / block.x);
        ops::scale<3, float><<<grid, block, block.x * sizeof(float), s>>>(d, n);
        cudaFuncSetAttribute(ops::scale<3, float>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
        ops::scale<3, float><<<grid, block, 64 * 1024>>>(d, n);
        printf("%s %s\n", cudaGetErrorName(cudaGetLastError()), cudaGetErrorName(cudaStreamSynchronize(s)));
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        printf("%g %g\n", h[1], h[299]);
        cudaStreamDestroy(s);
        cudaFree(d);
        return 0;
    }'''
    for check in (False, True):
        result = cudacheck.run_program(source, backend="cpu", check=check)
        assert result.stdout == f"cudaSuccess cudaSuccess\n{0.5 * 9:g} {0.5 * 299 * 9:g}\n", result.stderr


def test_a_compile_error_on_a_launch_line_names_that_line():
    source = BASE.replace("d_c, n);", "d_c, nn);")
    with pytest.raises(cudacheck.CompileError) as e:
        cudacheck.run_program(source, backend="cpu")
    assert f"line {line_of(source, 'nn);')}: use of undeclared identifier 'nn'" in str(e.value)
